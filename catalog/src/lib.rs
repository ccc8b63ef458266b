//! fleetbench's catalog of runs: every measurement's whole result document (the versioned
//! JSON, so nothing is lost and old results stay readable) beside indexed columns to list,
//! filter and compare them by. One file of SQLite by default, or a team's shared catalog on
//! PostgreSQL or MySQL, through one SQL API (sqlx's Any driver). The coordinator decides
//! what a record holds (crate `fleetbench`); this crate only keeps records.

pub mod ids;
pub mod schema;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sqlx::{Connection, Executor, Row};

pub use ids::IdSpec;
pub use schema::Dialect;

/// Why the catalog could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot {0}: {1}")]
    Sql(&'static str, String),
    #[error("cannot open the catalog {0}: {1}")]
    Open(String, String),
    #[error(
        "the catalog was written by a newer fleetbench (schema {0}; this one reads up to {1}): upgrade fleetbench, or give another --catalog"
    )]
    Newer(u32, u32),
    #[error("the catalog is damaged: {0}")]
    Corrupt(String),
    #[error("'{0}': {1}")]
    BadId(String, String),
    #[error("no run {0} in the catalog{1}")]
    NoSuchRun(String, String),
    #[error("'{0}' names {1} runs: {2} (give more of the id)")]
    Ambiguous(String, usize, String),
}

impl CatalogError {
    /// Maps an sqlx error met while trying to `what`.
    pub fn sql(what: &'static str) -> impl Fn(sqlx::Error) -> CatalogError {
        move |e| CatalogError::Sql(what, one_line(&e.to_string()))
    }
}

/// A message on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where a catalog lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (made, with its directory, when missing).
    File(PathBuf),
    /// A server: `postgres://...` or `mysql://...`.
    Url(String),
}

impl Location {
    /// `--catalog VALUE`: a URL of a server the catalog knows, else a file's path.
    pub fn parse(value: &str) -> Location {
        match Dialect::of_url(value) {
            Some(Dialect::Postgres | Dialect::Mysql) => Location::Url(value.to_string()),
            Some(Dialect::Sqlite) => {
                let path = value.trim_start_matches("sqlite:").trim_start_matches("//");
                Location::File(PathBuf::from(path))
            }
            None => Location::File(PathBuf::from(value)),
        }
    }

    /// How messages name it: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Url(u) => mask_password(u),
        }
    }
}

/// `scheme://user:secret@host/db` as `scheme://user:***@host/db`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((cred, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    match cred.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// One measurement as the catalog keeps it: what it is listed and filtered by, and the
/// whole result document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// Given by [`Catalog::insert`].
    pub id: String,
    /// "run", "sweep step", "scenario step".
    pub kind: String,
    /// The sweep's or scenario file's run this step belongs to ("" for a run alone).
    pub group_id: String,
    /// Which step ("32 threads", "direct, 16 threads"); "" for a run alone.
    pub label: String,
    pub started_ms: i64,
    pub ended_ms: i64,
    pub test: String,
    /// Secrets masked.
    pub command_line: String,
    /// Each target's name and server version.
    pub targets: BTreeMap<String, String>,
    pub agents: Vec<String>,
    pub threads: i64,
    pub rate: f64,
    pub tags: BTreeMap<String, String>,
    pub tps: f64,
    pub qps: Option<f64>,
    pub lat_avg_ms: f64,
    /// The first requested percentile and its latency.
    pub lat_pct: f64,
    pub lat_pct_ms: f64,
    pub lat_max_ms: f64,
    pub errors_per_sec: f64,
    pub interrupted: bool,
    /// The figures a regression is looked for in, by name (tps, the percentile's latency,
    /// the servers' costs per transaction).
    pub figures: BTreeMap<String, f64>,
    /// What makes runs comparable (test, workload options, threads, targets), and its hash.
    pub cmp_key: String,
    pub cmp_hash: String,
    pub format_version: i64,
    /// The result document (JSON); empty in lists.
    pub doc: String,
}

/// Which runs a list wants; newest first.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub test: Option<String>,
    pub tag: Option<(String, String)>,
    pub target: Option<String>,
    pub since_ms: Option<i64>,
    pub cmp_hash: Option<String>,
    /// Only runs that started before this (a run's baseline).
    pub before_ms: Option<i64>,
    pub complete_only: bool,
    pub limit: Option<u32>,
}

/// An open catalog.
pub struct Catalog {
    conn: sqlx::AnyConnection,
    dialect: Dialect,
    location: Location,
}

/// The columns a list reads (all but the document).
const COLUMNS: &str = "id, kind, group_id, label, started_ms, ended_ms, test, command_line, targets, agents, \
     threads, rate, tags, tps, qps, lat_avg_ms, lat_pct, lat_pct_ms, lat_max_ms, errors_per_sec, \
     interrupted, figures, cmp_hash, cmp_key, format_version";

impl Catalog {
    /// Opens (and on first use creates) the catalog at `location`.
    pub async fn open(location: &Location) -> Result<Catalog, CatalogError> {
        sqlx::any::install_default_drivers();
        let open_err = |e: String| CatalogError::Open(location.describe(), one_line(&e));
        let (url, dialect) = match location {
            Location::File(p) => (sqlite_url(p).map_err(open_err)?, Dialect::Sqlite),
            Location::Url(u) => (
                u.clone(),
                Dialect::of_url(u).ok_or_else(|| open_err("not a catalog URL".into()))?,
            ),
        };
        let mut conn = sqlx::AnyConnection::connect(&url)
            .await
            .map_err(|e| open_err(e.to_string()))?;
        if dialect == Dialect::Sqlite {
            // Two coordinators may write at once: readers never block the writer, and a
            // writer waits its turn rather than failing.
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA busy_timeout = 15000"] {
                conn.execute(pragma)
                    .await
                    .map_err(|e| open_err(e.to_string()))?;
            }
        }
        schema::migrate(&mut conn, dialect).await?;
        Ok(Catalog {
            conn,
            dialect,
            location: location.clone(),
        })
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Stores `r` under a new id, which it returns.
    pub async fn insert(&mut self, r: &Record) -> Result<String, CatalogError> {
        let cols = "id, kind, group_id, label, started_ms, ended_ms, test, command_line, targets, agents, \
                    threads, rate, tags, tps, qps, lat_avg_ms, lat_pct, lat_pct_ms, lat_max_ms, errors_per_sec, \
                    interrupted, figures, cmp_hash, cmp_key, format_version, doc";
        let params: Vec<String> = (1..=26).map(|n| self.dialect.param(n)).collect();
        let sql = format!(
            "INSERT INTO fleetbench_runs ({cols}) VALUES ({})",
            params.join(", ")
        );
        // A clash of ids (same second, same chance) is tried again with new chance.
        let mut last = None;
        for _ in 0..5 {
            let id = ids::new_id(r.started_ms, ids::noise());
            let q = sqlx::query(&sql)
                .bind(id.clone())
                .bind(r.kind.clone())
                .bind(r.group_id.clone())
                .bind(r.label.clone())
                .bind(r.started_ms)
                .bind(r.ended_ms)
                .bind(r.test.clone())
                .bind(r.command_line.clone())
                .bind(encode_map(&r.targets))
                .bind(r.agents.join(","))
                .bind(r.threads)
                .bind(r.rate)
                .bind(encode_map(&r.tags))
                .bind(r.tps)
                .bind(r.qps)
                .bind(r.lat_avg_ms)
                .bind(r.lat_pct)
                .bind(r.lat_pct_ms)
                .bind(r.lat_max_ms)
                .bind(r.errors_per_sec)
                .bind(i64::from(r.interrupted))
                .bind(encode_figures(&r.figures))
                .bind(r.cmp_hash.clone())
                .bind(r.cmp_key.clone())
                .bind(r.format_version)
                .bind(r.doc.clone());
            match q.execute(&mut self.conn).await {
                Ok(_) => return Ok(id),
                Err(e) if is_duplicate(&e) => last = Some(e),
                Err(e) => return Err(CatalogError::sql("record the run")(e)),
            }
        }
        Err(CatalogError::sql("record the run")(
            last.unwrap_or(sqlx::Error::RowNotFound),
        ))
    }

    /// The runs `f` wants, newest first, without their documents.
    pub async fn list(&mut self, f: &Filter) -> Result<Vec<Record>, CatalogError> {
        let (clause, binds) = where_clause(f, self.dialect);
        let mut sql = format!(
            "SELECT {COLUMNS} FROM fleetbench_runs{clause} ORDER BY started_ms DESC, id DESC"
        );
        if let Some(n) = f.limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut q = sqlx::query(&sql);
        for b in binds {
            q = match b {
                Bind::Text(s) => q.bind(s),
                Bind::Int(i) => q.bind(i),
            };
        }
        let rows = q
            .fetch_all(&mut self.conn)
            .await
            .map_err(CatalogError::sql("list the runs"))?;
        rows.iter().map(record_of).collect()
    }

    /// The run `spec` names, with its document.
    pub async fn get(&mut self, spec: &IdSpec) -> Result<Record, CatalogError> {
        let id = self.resolve(spec).await?;
        let sql = format!(
            "SELECT {COLUMNS}, doc FROM fleetbench_runs WHERE id = {}",
            self.dialect.param(1)
        );
        let row = sqlx::query(&sql)
            .bind(id.clone())
            .fetch_optional(&mut self.conn)
            .await
            .map_err(CatalogError::sql("read the run"))?
            .ok_or_else(|| CatalogError::NoSuchRun(id, self.where_said()))?;
        let mut r = record_of(&row)?;
        r.doc = text_of(&row, "doc").map_err(CatalogError::sql("read the run"))?;
        Ok(r)
    }

    /// The whole id of the run `spec` names.
    pub async fn resolve(&mut self, spec: &IdSpec) -> Result<String, CatalogError> {
        match spec {
            IdSpec::Last(n) => {
                let sql = format!(
                    "SELECT id FROM fleetbench_runs ORDER BY started_ms DESC, id DESC LIMIT 1 OFFSET {n}"
                );
                let row = sqlx::query(&sql)
                    .fetch_optional(&mut self.conn)
                    .await
                    .map_err(CatalogError::sql("find the run"))?;
                let name = if *n == 0 {
                    "last".to_string()
                } else {
                    format!("last~{n}")
                };
                let row = row.ok_or_else(|| CatalogError::NoSuchRun(name, self.where_said()))?;
                row.try_get(0).map_err(CatalogError::sql("find the run"))
            }
            IdSpec::Prefix(p) => {
                let sql = format!(
                    "SELECT id FROM fleetbench_runs WHERE id LIKE {} ORDER BY id LIMIT 6",
                    self.dialect.param(1)
                );
                let rows = sqlx::query(&sql)
                    .bind(format!("{p}%"))
                    .fetch_all(&mut self.conn)
                    .await
                    .map_err(CatalogError::sql("find the run"))?;
                let found: Vec<String> = rows
                    .iter()
                    .map(|r| r.try_get::<String, _>(0))
                    .collect::<Result<_, _>>()
                    .map_err(CatalogError::sql("find the run"))?;
                match found.len() {
                    0 => Err(CatalogError::NoSuchRun(p.clone(), self.where_said())),
                    1 => Ok(found[0].clone()),
                    n => Err(CatalogError::Ambiguous(p.clone(), n, found.join(", "))),
                }
            }
        }
    }

    /// Removes the run `spec` names; its id.
    pub async fn remove(&mut self, spec: &IdSpec) -> Result<String, CatalogError> {
        let id = self.resolve(spec).await?;
        let sql = format!(
            "DELETE FROM fleetbench_runs WHERE id = {}",
            self.dialect.param(1)
        );
        sqlx::query(&sql)
            .bind(id.clone())
            .execute(&mut self.conn)
            .await
            .map_err(CatalogError::sql("remove the run"))?;
        Ok(id)
    }

    /// Sets the tags of the run `spec` names (the document is left as it was recorded); its
    /// id.
    pub async fn set_tags(
        &mut self,
        spec: &IdSpec,
        tags: &BTreeMap<String, String>,
    ) -> Result<String, CatalogError> {
        let id = self.resolve(spec).await?;
        let sql = format!(
            "UPDATE fleetbench_runs SET tags = {} WHERE id = {}",
            self.dialect.param(1),
            self.dialect.param(2)
        );
        sqlx::query(&sql)
            .bind(encode_map(tags))
            .bind(id.clone())
            .execute(&mut self.conn)
            .await
            .map_err(CatalogError::sql("tag the run"))?;
        Ok(id)
    }

    /// " (PATH)": where the catalog is, for messages.
    fn where_said(&self) -> String {
        format!(" ({})", self.location.describe())
    }
}

/// The URL of the SQLite file at `path`, its directory made when missing.
fn sqlite_url(path: &Path) -> Result<String, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = path
        .to_str()
        .ok_or_else(|| "the path is not UTF-8".to_string())?;
    if text.contains('?') || text.contains('#') {
        return Err("a catalog path may not hold '?' or '#'".into());
    }
    Ok(format!("sqlite://{text}?mode=rwc"))
}

/// Whether `e` is a clash of primary keys.
fn is_duplicate(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// A value a list's WHERE binds.
enum Bind {
    Text(String),
    Int(i64),
}

/// The WHERE of `f`'s list, and what it binds in order.
fn where_clause(f: &Filter, d: Dialect) -> (String, Vec<Bind>) {
    let mut conds: Vec<String> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let mut add = |cond: &str, b: Bind| {
        binds.push(b);
        conds.push(cond.replace('#', &d.param(binds.len())));
    };
    if let Some(t) = &f.test {
        add("test = #", Bind::Text(t.clone()));
    }
    if let Some((k, v)) = &f.tag {
        let one: BTreeMap<String, String> = [(k.clone(), v.clone())].into();
        add("tags LIKE #", Bind::Text(format!("%{}%", encode_map(&one))));
    }
    if let Some(t) = &f.target {
        add("targets LIKE #", Bind::Text(format!("%;{}=%", escape(t))));
    }
    if let Some(s) = f.since_ms {
        add("started_ms >= #", Bind::Int(s));
    }
    if let Some(b) = f.before_ms {
        add("started_ms < #", Bind::Int(b));
    }
    if let Some(h) = &f.cmp_hash {
        add("cmp_hash = #", Bind::Text(h.clone()));
    }
    if f.complete_only {
        conds.push("interrupted = 0".into());
    }
    if conds.is_empty() {
        (String::new(), binds)
    } else {
        (format!(" WHERE {}", conds.join(" AND ")), binds)
    }
}

/// A map as ";k=v;k2=v2;" (each key and value with ';', '=' and '%' escaped), so that a
/// LIKE finds one pair.
pub fn encode_map(m: &BTreeMap<String, String>) -> String {
    let mut s = String::from(";");
    for (k, v) in m {
        s.push_str(&format!("{}={};", escape(k), escape(v)));
    }
    s
}

/// The map [`encode_map`] wrote.
pub fn decode_map(s: &str) -> BTreeMap<String, String> {
    s.split(';')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((unescape(k), unescape(v)))
        })
        .collect()
}

/// Figures as a map's text (full precision: `{:?}` of an f64 reads back the same).
fn encode_figures(f: &BTreeMap<String, f64>) -> String {
    encode_map(
        &f.iter()
            .map(|(k, v)| (k.clone(), format!("{v:?}")))
            .collect(),
    )
}

fn decode_figures(s: &str) -> BTreeMap<String, f64> {
    decode_map(s)
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace(';', "%3B")
        .replace('=', "%3D")
        .replace('_', "%5F")
}

fn unescape(s: &str) -> String {
    s.replace("%5F", "_")
        .replace("%3D", "=")
        .replace("%3B", ";")
        .replace("%25", "%")
}

/// Column `name` of `row` as text: MySQL's TEXT columns reach the Any driver as BLOBs.
fn text_of(row: &sqlx::any::AnyRow, name: &str) -> Result<String, sqlx::Error> {
    match row.try_get::<String, _>(name) {
        Ok(s) => Ok(s),
        Err(e) => match row.try_get::<Vec<u8>, _>(name) {
            Ok(b) => String::from_utf8(b).map_err(|u| sqlx::Error::Decode(Box::new(u))),
            Err(_) => Err(e),
        },
    }
}

/// A listed row as a record (no document).
fn record_of(row: &sqlx::any::AnyRow) -> Result<Record, CatalogError> {
    let bad = CatalogError::sql("read the runs");
    let text = |name: &str| text_of(row, name).map_err(&bad);
    let int = |name: &str| row.try_get::<i64, _>(name).map_err(&bad);
    let num = |name: &str| row.try_get::<f64, _>(name).map_err(&bad);
    Ok(Record {
        id: text("id")?,
        kind: text("kind")?,
        group_id: text("group_id")?,
        label: text("label")?,
        started_ms: int("started_ms")?,
        ended_ms: int("ended_ms")?,
        test: text("test")?,
        command_line: text("command_line")?,
        targets: decode_map(&text("targets")?),
        agents: text("agents")?
            .split(',')
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect(),
        threads: int("threads")?,
        rate: num("rate")?,
        tags: decode_map(&text("tags")?),
        tps: num("tps")?,
        qps: row.try_get::<Option<f64>, _>("qps").map_err(&bad)?,
        lat_avg_ms: num("lat_avg_ms")?,
        lat_pct: num("lat_pct")?,
        lat_pct_ms: num("lat_pct_ms")?,
        lat_max_ms: num("lat_max_ms")?,
        errors_per_sec: num("errors_per_sec")?,
        interrupted: int("interrupted")? != 0,
        figures: decode_figures(&text("figures")?),
        cmp_hash: text("cmp_hash")?,
        cmp_key: text("cmp_key")?,
        format_version: int("format_version")?,
        doc: String::new(),
    })
}

#[cfg(test)]
mod tests;
