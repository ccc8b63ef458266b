//! `fleetbench serve [--web ADDR]`: the web page over the catalog alone (its runs, their
//! reports, trends and comparisons) until Ctrl-C; no run of its own.

use std::sync::Arc;

use crate::cli::RawArgs;
use crate::error::UsageError;
use crate::exit::EXIT_OK;
use crate::web::{LiveView, WebSettings};

/// Where `serve` listens without `--web`.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

pub async fn run(raw: &RawArgs, web: Option<WebSettings>) -> anyhow::Result<i32> {
    if raw.words.len() > 1 {
        return Err(UsageError::new(
            "usage: fleetbench serve [--web IP:PORT] [--catalog PATH|URL]",
        )
        .into());
    }
    let settings = match web {
        Some(w) => w,
        None => WebSettings {
            addr: DEFAULT_ADDR.parse().expect("a socket address"),
            token: None,
        },
    };
    // serve's --token-file is the page's token, which only a page beyond loopback asks for.
    if raw.token_file.is_some() && settings.token.is_none() {
        return Err(UsageError(format!(
            "serve takes --token-file for a page beyond loopback: the page at {} asks for no token",
            settings.addr
        ))
        .into());
    }
    let catalog = crate::catalog::Settings::of(raw)?;
    if catalog.location.is_none() {
        return Err(UsageError::new(
            "serve shows the catalog's runs: give --catalog PATH|URL (FLEETBENCH_CATALOG is off)",
        )
        .into());
    }
    let _web = settings
        .start(Arc::new(LiveView::default()), catalog.location)
        .await?;
    eprintln!("note: serving the catalog's runs until Ctrl-C");
    tokio::signal::ctrl_c().await?;
    Ok(EXIT_OK)
}
