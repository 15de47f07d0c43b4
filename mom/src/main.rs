//! `pbs_mom`: flags -> [`mom::MomConfig`] -> tracing -> [`mom::run`] (or, `--simulate`,
//! [`mom::simulate::run`]) until SIGINT or SIGTERM.
//! No logic here.

use clap::Parser;
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

/// A failure to start is one line on stderr, `pbs_mom: <what>: <why>`, and exit status 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pbs_mom: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args = mom::MomArgs::parse();
    // A panic anywhere (any task, under the job table's lock or not) ends the mom: the server
    // is the truth, and a restarted mom ends its leftovers and registers again.
    pbslog::fatal::install_panic_hook("pbs_mom");
    let level = match args.verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    // OpenPBS-style log lines (`tracejob` reads them): `date;event;pbs_mom;type;name;message`.
    tracing_subscriber::registry()
        .with(filter)
        .with(pbslog::layer::PbsLogLayer::new("pbs_mom", std::io::stderr()))
        .init();
    let config = args.into_config();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match config.simulate {
        Some(count) => runtime.block_on(mom::simulate::run(config, count, shutdown_signal())),
        None => runtime.block_on(mom::run(config, shutdown_signal())),
    }
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(err) => {
            tracing::warn!("cannot watch SIGTERM: {err}");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    tracing::info!("shutting down");
}
