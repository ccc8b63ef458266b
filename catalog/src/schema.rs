//! The catalog's tables and their versions: each migration is a list of statements per SQL
//! dialect, applied once in order; the version reached is kept in `fleetbench_catalog_meta`.
//! A catalog written by a newer fleetbench (a higher version) is refused, never altered.

use crate::CatalogError;

/// The schema this build writes and reads.
pub const VERSION: u32 = 1;

/// The SQL a catalog's server speaks, where the three differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
    Mysql,
}

impl Dialect {
    /// The dialect of a catalog URL (`sqlite:`, `postgres://` or `postgresql://`,
    /// `mysql://` or `mariadb://`).
    pub fn of_url(url: &str) -> Option<Dialect> {
        let scheme = url.split(':').next()?.to_ascii_lowercase();
        match scheme.as_str() {
            "sqlite" => Some(Dialect::Sqlite),
            "postgres" | "postgresql" => Some(Dialect::Postgres),
            "mysql" | "mariadb" => Some(Dialect::Mysql),
            _ => None,
        }
    }

    /// Placeholder `n` (from 1) of a statement.
    pub fn param(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::Sqlite | Dialect::Mysql => "?".into(),
        }
    }

    /// The statement that sets the schema version, whether or not a row is there.
    fn set_version(self) -> &'static str {
        match self {
            Dialect::Sqlite => {
                "INSERT OR REPLACE INTO fleetbench_catalog_meta (name, value) VALUES ('schema_version', ?)"
            }
            Dialect::Postgres => {
                "INSERT INTO fleetbench_catalog_meta (name, value) VALUES ('schema_version', $1) \
                 ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"
            }
            Dialect::Mysql => {
                "REPLACE INTO fleetbench_catalog_meta (name, value) VALUES ('schema_version', ?)"
            }
        }
    }

    /// A column that holds a whole result document (MySQL's TEXT stops at 64 KiB).
    fn document_type(self) -> &'static str {
        match self {
            Dialect::Mysql => "LONGTEXT",
            Dialect::Sqlite | Dialect::Postgres => "TEXT",
        }
    }
}

/// The statements of migration `to` (from `to - 1`).
fn migration(to: u32, d: Dialect) -> Vec<String> {
    match to {
        1 => vec![
            format!(
                "CREATE TABLE IF NOT EXISTS fleetbench_runs (
                    id VARCHAR(32) NOT NULL PRIMARY KEY,
                    kind VARCHAR(32) NOT NULL,
                    group_id VARCHAR(32) NOT NULL,
                    label VARCHAR(255) NOT NULL,
                    started_ms BIGINT NOT NULL,
                    ended_ms BIGINT NOT NULL,
                    test VARCHAR(255) NOT NULL,
                    command_line TEXT NOT NULL,
                    targets TEXT NOT NULL,
                    agents TEXT NOT NULL,
                    threads BIGINT NOT NULL,
                    rate DOUBLE PRECISION NOT NULL,
                    tags TEXT NOT NULL,
                    tps DOUBLE PRECISION NOT NULL,
                    qps DOUBLE PRECISION,
                    lat_avg_ms DOUBLE PRECISION NOT NULL,
                    lat_pct DOUBLE PRECISION NOT NULL,
                    lat_pct_ms DOUBLE PRECISION NOT NULL,
                    lat_max_ms DOUBLE PRECISION NOT NULL,
                    errors_per_sec DOUBLE PRECISION NOT NULL,
                    interrupted BIGINT NOT NULL,
                    figures TEXT NOT NULL,
                    cmp_hash VARCHAR(16) NOT NULL,
                    cmp_key TEXT NOT NULL,
                    format_version BIGINT NOT NULL,
                    doc {} NOT NULL
                )",
                d.document_type()
            ),
            "CREATE INDEX fleetbench_runs_started ON fleetbench_runs (started_ms)".into(),
            "CREATE INDEX fleetbench_runs_key ON fleetbench_runs (cmp_hash, started_ms)".into(),
        ],
        _ => Vec::new(),
    }
}

/// Brings the catalog behind `conn` to [`VERSION`]: creates what is missing, refuses a
/// newer one.
pub async fn migrate(conn: &mut sqlx::AnyConnection, d: Dialect) -> Result<(), CatalogError> {
    use sqlx::Executor;
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fleetbench_catalog_meta (
            name VARCHAR(64) NOT NULL PRIMARY KEY,
            value VARCHAR(255) NOT NULL
        )",
    )
    .await
    .map_err(CatalogError::sql("create the catalog's tables"))?;
    let found = version(conn).await?;
    if found > VERSION {
        return Err(CatalogError::Newer(found, VERSION));
    }
    for to in found + 1..=VERSION {
        for stmt in migration(to, d) {
            if let Err(e) = conn.execute(stmt.as_str()).await {
                // Another coordinator may have made the same table or index a moment ago.
                if !already_there(&e) {
                    return Err(CatalogError::sql("create the catalog's tables")(e));
                }
            }
        }
        sqlx::query(d.set_version())
            .bind(to.to_string())
            .execute(&mut *conn)
            .await
            .map_err(CatalogError::sql("record the catalog's version"))?;
    }
    Ok(())
}

/// The schema version the catalog records (0: none yet).
async fn version(conn: &mut sqlx::AnyConnection) -> Result<u32, CatalogError> {
    use sqlx::Row;
    let row =
        sqlx::query("SELECT value FROM fleetbench_catalog_meta WHERE name = 'schema_version'")
            .fetch_optional(&mut *conn)
            .await
            .map_err(CatalogError::sql("read the catalog's version"))?;
    let Some(row) = row else {
        return Ok(0);
    };
    let v: String = row
        .try_get(0)
        .map_err(CatalogError::sql("read the catalog's version"))?;
    v.trim()
        .parse()
        .map_err(|_| CatalogError::Corrupt(format!("schema_version is '{v}'")))
}

/// Whether `e` says that what a migration creates exists already.
fn already_there(e: &sqlx::Error) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("already exists") || text.contains("duplicate key name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_dialect_and_placeholders_follow_it() {
        assert_eq!(Dialect::of_url("sqlite:///tmp/c.db"), Some(Dialect::Sqlite));
        assert_eq!(
            Dialect::of_url("postgresql://u@h/db"),
            Some(Dialect::Postgres)
        );
        assert_eq!(Dialect::of_url("MARIADB://u@h/db"), Some(Dialect::Mysql));
        assert_eq!(Dialect::of_url("redis://h"), None);
        assert_eq!(Dialect::Postgres.param(3), "$3");
        assert_eq!(Dialect::Mysql.param(3), "?");
        // The document column holds more than 64 KiB everywhere.
        for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
            let create = &migration(1, d)[0];
            assert!(create.contains("doc TEXT") || create.contains("doc LONGTEXT"));
        }
        assert!(migration(1, Dialect::Mysql)[0].contains("doc LONGTEXT"));
        assert!(migration(VERSION + 1, Dialect::Sqlite).is_empty());
    }
}
