//! mysql_async behind the driver interface: the client for logins the lean client does not
//! speak (caching_sha2_password's full exchange without TLS, ed25519, ...), on a
//! single-threaded runtime of the worker's own, and the connections of prepare and
//! cleanup.

use std::sync::Arc;

use fleetbench_model::workloads::server::Target;
use mysql_async::prelude::Queryable;

use super::{Client, ConnInfo, Param, Reply, Sockets, SqlError, show_variables_sql};

/// mysql_async's TLS settings for prepare and cleanup. `preferred` has no such mode
/// there: it goes without TLS, as a server without TLS would.
fn ssl_opts(t: &Target) -> Option<mysql_async::SslOpts> {
    use fleetbench_model::workloads::oltp::tls::SslMode;
    let s = &t.ssl;
    if matches!(s.mode, SslMode::Disabled | SslMode::Preferred) {
        return None;
    }
    let path = |p: &std::path::PathBuf| p.clone().into();
    let mut o = mysql_async::SslOpts::default()
        .with_danger_accept_invalid_certs(s.mode == SslMode::Required)
        .with_danger_skip_domain_validation(s.mode != SslMode::VerifyIdentity);
    if let Some(ca) = &s.ca {
        o = o.with_root_certs(vec![path(ca)]);
    }
    if let (Some(c), Some(k)) = (&s.cert, &s.key) {
        o = o.with_client_identity(Some(mysql_async::ClientIdentity::new(path(c), path(k))));
    }
    Some(o)
}

pub fn opts(t: &Target) -> mysql_async::Opts {
    let b = mysql_async::OptsBuilder::default()
        .user(Some(t.user.clone()))
        .pass(Some(t.password.clone()))
        .db_name(Some(t.database.clone()))
        .tcp_nodelay(true)
        // Statements are prepared once per connection by the worker itself.
        .stmt_cache_size(0)
        .prefer_socket(false)
        // Given here, the driver need not ask the server with a SELECT at connect,
        // which would show in the server's Com_select beside the benchmark's reads.
        // 16 MiB is the server's default and far above the 512 KiB load statements.
        .max_allowed_packet(Some(16 * 1024 * 1024))
        .wait_timeout(Some(28_800))
        .ssl_opts(ssl_opts(t));
    let b = match &t.socket {
        Some(s) => b.socket(Some(s.clone())),
        // libmysqlclient's "localhost" means the socket; without one, use loopback TCP.
        None if t.first_host() == "localhost" => b.ip_or_hostname("127.0.0.1").tcp_port(t.port),
        None => b.ip_or_hostname(t.first_host()).tcp_port(t.port),
    };
    b.into()
}

/// mysql_async behind a blocking face: every call runs to completion on a current-thread
/// runtime owned by this connection, or ends early when the run is cancelled.
pub struct AsyncClient {
    rt: tokio::runtime::Runtime,
    conn: mysql_async::Conn,
    cancel: tokio::sync::watch::Receiver<bool>,
}

/// The driver's error in the lean client's terms: server errors keep their code; anything
/// else means the connection can no longer be trusted.
fn convert(e: mysql_async::Error) -> SqlError {
    match e {
        mysql_async::Error::Server(s) => SqlError::Server {
            code: u32::from(s.code),
            message: s.message,
        },
        // Kept as it is: whether it timed out or was reset decides a retry.
        mysql_async::Error::Io(mysql_async::IoError::Io(e)) => SqlError::Io(e),
        other => SqlError::Io(std::io::Error::other(error_text(&other))),
    }
}

fn cancelled() -> SqlError {
    SqlError::Io(std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        "the run was cancelled",
    ))
}

/// Runs `f` on `rt` unless (or until) `cancel` is raised.
fn block<T>(
    rt: &tokio::runtime::Runtime,
    cancel: &mut tokio::sync::watch::Receiver<bool>,
    f: impl std::future::Future<Output = Result<T, mysql_async::Error>>,
) -> Result<T, SqlError> {
    rt.block_on(async {
        tokio::select! {
            r = f => r.map_err(convert),
            _ = cancel.wait_for(|c| *c) => Err(cancelled()),
        }
    })
}

/// What a finished mysql_async statement returned, in the lean client's terms.
async fn reply<'a, 't: 'a, P: mysql_async::prelude::Protocol>(
    mut r: mysql_async::QueryResult<'a, 't, P>,
) -> Result<Reply, mysql_async::Error> {
    let has_rows = r.columns().is_some_and(|c| !c.is_empty());
    let mut rows = 0u64;
    r.for_each(|_| rows += 1).await?;
    Ok(if has_rows {
        Reply::Rows(rows)
    } else {
        Reply::Ok {
            affected_rows: r.affected_rows(),
        }
    })
}

fn value(p: &Param) -> mysql_async::Value {
    match p {
        Param::Int(v) => mysql_async::Value::Int(*v),
        Param::Null => mysql_async::Value::NULL,
        Param::Str(b) => mysql_async::Value::Bytes(b.to_vec()),
    }
}

impl Client for AsyncClient {
    type Stmt = mysql_async::Statement;
    const STACK_SIZE: usize = 2 * 1024 * 1024;
    const COOPERATIVE: bool = false;

    fn connect(target: &Target, sockets: &Arc<Sockets>) -> Result<Self, SqlError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let mut cancel = sockets.subscribe();
        let limit = target.connect_timeout();
        let login = async {
            match tokio::time::timeout(limit, mysql_async::Conn::new(opts(target))).await {
                Ok(r) => r,
                Err(_) => Err(mysql_async::Error::Io(mysql_async::IoError::Io(
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the server did not answer within the connect timeout",
                    ),
                ))),
            }
        };
        let conn = block(&rt, &mut cancel, login)?;
        Ok(AsyncClient { rt, conn, cancel })
    }

    fn prepare(&mut self, sql: &str) -> Result<Self::Stmt, SqlError> {
        block(&self.rt, &mut self.cancel, self.conn.prep(sql))
    }

    fn execute(&mut self, stmt: &mut Self::Stmt, params: &[Param]) -> Result<Reply, SqlError> {
        let params = if params.is_empty() {
            mysql_async::Params::Empty
        } else {
            mysql_async::Params::Positional(params.iter().map(value).collect())
        };
        let conn = &mut self.conn;
        block(&self.rt, &mut self.cancel, async move {
            reply(conn.exec_iter(&*stmt, params).await?).await
        })
    }

    fn query(&mut self, sql: &str) -> Result<Reply, SqlError> {
        let conn = &mut self.conn;
        block(&self.rt, &mut self.cancel, async move {
            reply(conn.query_iter(sql).await?).await
        })
    }

    fn query_rows_upto(
        &mut self,
        sql: &str,
        max_rows: usize,
    ) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        let conn = &mut self.conn;
        let rows: Vec<mysql_async::Row> =
            block(
                &self.rt,
                &mut self.cancel,
                async move { conn.query(sql).await },
            )?;
        Ok(rows
            .into_iter()
            .take(max_rows)
            .map(|r| {
                r.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql_async::Value::NULL => None,
                        mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into()),
                        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect())
    }

    fn server_facts(
        &mut self,
        vars: &[String],
    ) -> Result<(String, Vec<(String, String)>), SqlError> {
        use mysql_async::prelude::Queryable;
        let (a, b, c) = self.conn.server_version();
        let version = format!("{a}.{b}.{c}");
        if vars.is_empty() {
            return Ok((version, Vec::new()));
        }
        let conn = &mut self.conn;
        let sql = show_variables_sql(vars);
        let values: Vec<(String, String)> =
            block(
                &self.rt,
                &mut self.cancel,
                async move { conn.query(sql).await },
            )?;
        Ok((version, values))
    }

    fn quit(self) {
        let AsyncClient {
            rt,
            conn,
            mut cancel,
        } = self;
        if !*cancel.borrow() {
            let _ = block(&rt, &mut cancel, conn.disconnect());
        }
    }

    fn info(&self) -> ConnInfo {
        // mysql_async does not say which plugin logged in; TLS is as the options asked.
        ConnInfo {
            client: "mysql_async",
            auth_plugin: String::new(),
            tls: if self.conn.opts().ssl_opts().is_some() {
                "TLS".into()
            } else {
                String::new()
            },
            ..ConnInfo::default()
        }
    }
}

/// A driver error as one short line: the server's message with its code, or the root
/// cause of an I/O error (the driver's own wrapping repeats itself).
pub fn error_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("{} (error {})", s.message, s.code),
        _ => {
            let mut msg = e.to_string();
            let mut cur = std::error::Error::source(e);
            while let Some(c) = cur {
                msg = c.to_string();
                cur = c.source();
            }
            msg
        }
    }
}
