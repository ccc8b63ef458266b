//! Which client a run's workers speak, chosen in one place: the lean client of the
//! target's database; for MySQL, mysql_async instead when the server wants a login the lean
//! client does not speak (or `FLEETBENCH_OLTP_CLIENT=mysql_async` asks for it).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use fleetbench_model::workloads::server::Driver;

use super::Client;
use super::asynch::AsyncClient;
use super::mysql;
use super::open_error::{LeanOpenError, OpenError};
use super::pgsql::PgConn;

/// Something opened with whichever client [`open_with`] chooses (a run's workers).
pub trait ForClient {
    type Out;

    /// Opens with client `C`; [`LeanOpenError::Unsupported`] asks for another client.
    fn open<C: Client + 'static>(
        &self,
    ) -> impl Future<Output = Result<Self::Out, LeanOpenError>> + Send;
}

/// Opens `what` with the client for `driver`, saying which in the agent's log under
/// `who` ("OLTP workers use the lean protocol client"). Before a fallback opens anew, the
/// count of connections `opened` starts from zero again.
pub async fn open_with<F: ForClient + Sync>(
    driver: Driver,
    who: &str,
    what: &F,
    opened: &AtomicU64,
) -> Result<F::Out, OpenError> {
    if driver == Driver::Pgsql {
        tracing::info!("{who} workers use the lean PostgreSQL client");
        return what.open::<PgConn>().await.map_err(setting);
    }
    let forced = std::env::var("FLEETBENCH_OLTP_CLIENT").is_ok_and(|v| v == "mysql_async");
    if !forced {
        match what.open::<mysql::Conn>().await {
            Ok(out) => {
                tracing::info!("{who} workers use the lean protocol client");
                return Ok(out);
            }
            Err(LeanOpenError::Open(e)) => return Err(e),
            Err(LeanOpenError::Unsupported(msg)) => {
                tracing::warn!("{who} workers fall back to mysql_async (slower per query): {msg}");
            }
        }
    }
    tracing::info!("{who} workers use mysql_async");
    opened.store(0, Ordering::Relaxed);
    what.open::<AsyncClient>().await.map_err(setting)
}

/// A login no client here speaks, or another failure, as the run's error.
fn setting(e: LeanOpenError) -> OpenError {
    match e {
        LeanOpenError::Open(e) => e,
        LeanOpenError::Unsupported(m) => OpenError::Setting(m),
    }
}
