//! `flotilla`: one binary for the hub, the agent and the CLI.

mod controllers;
mod dns;
mod fleet;
mod memory;
mod serve;
mod sim;

use clap::{Parser, Subcommand};

// mimalloc instead of glibc's malloc: the hub allocates many small JSON values per request, and
// profiles showed glibc's malloc/free/consolidate at a fifth of the hub's CPU and its arenas
// holding on to freed memory. The `system-allocator` feature keeps glibc's, for heap profilers
// that hook malloc (heaptrack), never for production.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// flotilla: run many Kubernetes clusters as one fleet.
///
/// The hub speaks the Kubernetes API, so kubectl, Helm and GitOps tools work against it
/// unchanged. Start one with `flotilla serve`, then point kubectl at the admin kubeconfig it
/// writes.
#[derive(Parser)]
#[command(name = "flotilla", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the hub API server (HTTPS, Kubernetes API).
    Serve(Box<serve::ServeArgs>),
    /// Run every controller and push worker as a client of the hub; any number of these
    /// processes share the work by shard Leases.
    Controllers(controllers::ControllersArgs),
    /// Create bootstrap credentials members use to ask to join.
    Token(fleet::token::TokenArgs),
    /// Approve or remove member clusters.
    Cluster(fleet::cluster::ClusterArgs),
    /// Join a member in Push mode: the hub keeps its kubeconfig and delivers Works to it.
    Join(fleet::join::JoinArgs),
    /// Run the pull agent for one member: join the hub, deliver Works, report health.
    Agent(fleet::agent::AgentArgs),
    /// Answer the fleet's DNS names (authoritative for a zone) as a client of the hub.
    Dns(dns::DnsArgs),
    /// Explain flotilla's decisions, e.g. `explain placement deployment/web -n demo`.
    Explain(fleet::explain::ExplainArgs),
    /// Follow, pause, resume or undo an object's progressive rollout across its clusters,
    /// e.g. `rollout status deployment/web -n demo --watch`.
    Rollout(fleet::rollout::RolloutArgs),
    /// Serve many simulated member clusters from one process, each a Kubernetes API under
    /// `https://ADDR/clusters/<name>` with its kubeconfig in `--out DIR` (for scale tests).
    Sim(sim::SimArgs),
    /// Measure a server and append the figures to BENCHMARKS.md.
    Bench(flotilla_bench::BenchArgs),
}

/// Logs at `RUST_LOG`'s levels, else at `default`.
fn init_logging(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .init();
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // The simulator runs an API server per cluster: their start-up lines, a thousand times
    // over, would bury its own.
    init_logging(match cli.command {
        Command::Sim(_) => "info,flotilla_api=warn",
        _ => "info",
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        match cli.command {
            Command::Serve(args) => serve::run(*args).await,
            Command::Controllers(args) => controllers::run(args).await,
            Command::Token(args) => fleet::token::run(args).await,
            Command::Cluster(args) => fleet::cluster::run(args).await,
            Command::Join(args) => fleet::join::run(args).await,
            Command::Agent(args) => fleet::agent::run(args, serve::shutdown_signal()).await,
            Command::Dns(args) => dns::run(args, serve::shutdown_signal()).await,
            Command::Explain(args) => fleet::explain::run(args).await,
            Command::Rollout(args) => fleet::rollout::run(args).await,
            Command::Sim(args) => sim::run(args).await,
            Command::Bench(args) => flotilla_bench::run(args).await,
        }
    })
}
