//! The `bb` binary.
#![forbid(unsafe_code)]

use bb::cli::{self, Command};
use bb_core::{Access, Role};
use bb_core::{Catalogue, ServerConfig};
use bb_drive::Logger;
use bb_stdio::MAX_LINE;
use std::io::Write;
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// jemalloc rather than glibc's malloc, its freed pages purged by a background thread within a second
/// (`.cargo/config.toml`): glibc kept memory that answers had freed resident (236 MiB 40 s after three
/// unread batches were given back, while bb's heap held about 20 MiB; bench/share part 2, massif), so
/// what `--memory-budget` bounds was not what the process held.
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "bb: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    match cli::parse(std::env::args_os().skip(1))? {
        Command::Help(text) => print(text),
        Command::Version => print(&format!("bb {VERSION} (commit {})\n", env!("BB_COMMIT"))),
        Command::Tools(mut exposure) => {
            cli::toolsets_from_env(&mut exposure, &|name| std::env::var(name).ok())?;
            let catalogue = Catalogue::standard();
            let exposed = catalogue.expose(&exposure)?;
            if exposure.read_only {
                let _ = writeln!(
                    std::io::stderr(),
                    "bb: {}",
                    cli::read_only_said(&exposure.withheld_by_read_only(&catalogue))
                );
            }
            if exposed.tools().is_empty() {
                let _ = writeln!(std::io::stderr(), "bb: these options expose no tools");
            }
            // Whether each tool asks the person first: never, always, or the case (as wide as the widest).
            let asks = exposed.tools().iter().map(|t| t.asks.words().chars().count()).max().unwrap_or(0).max(6);
            let line = |t: &bb_core::ToolSpec| {
                let access = match (t.role, t.access) {
                    (Role::ViewCompanion { .. }, _) => "views only",
                    (_, Access::Read) => "read",
                    (_, Access::Write) => "write",
                    (_, Access::UnsafeWrite) => "unsafe write",
                };
                let group = match t.role {
                    Role::Data(g) => g.name(),
                    _ => "",
                };
                format!("{:<26} {:<14} {:<13} {:<asks$} {}\n", t.name, group, access, t.asks.words(), t.title)
            };
            let mut out: String = exposed.tools().iter().map(line).collect();
            let offer = exposure_offer(&catalogue, &exposed);
            if !offer.is_empty() {
                out.push_str("\nIn a session, enable_toolset can turn on:\n");
                out.push_str(&offer);
            }
            print(&out)
        }
        Command::Serve(mut options) => {
            cli::toolsets_from_env(&mut options.exposure, &|name| std::env::var(name).ok())?;
            let logger = Logger::new(options.log_level);
            let logger = if options.log_json { logger.json() } else { logger };
            let catalogue = Catalogue::standard();
            let exposed = catalogue.expose(&options.exposure)?;
            // What the configuration says at start: over HTTP after the address bb listens on.
            let mut notes: Vec<(bb_core::Level, String)> = Vec::new();
            if options.exposure.read_only {
                let withheld = options.exposure.withheld_by_read_only(&catalogue);
                // Said at the default level when it withholds a tool the operator named.
                let level = if withheld.is_empty() { bb_core::Level::Notice } else { bb_core::Level::Warning };
                notes.push((level, cli::read_only_said(&withheld)));
            }
            // Checked before serving: a wrong URL, CA file or key pair stops bb here with exit code 2.
            let config = bb::config::load(&options.connection, &|name| std::env::var(name).ok())?;
            let mut server_config = ServerConfig::new(exposed, VERSION);
            server_config.confirm = cli::confirm_from_env(options.confirm, &|name| std::env::var(name).ok())?;
            if !server_config.confirm {
                notes.push((bb_core::Level::Warning, cli::CONFIRM_OFF.to_owned()));
            }
            if let Some(scope) = cli::scope_from_env(&options.scope, &|name| std::env::var(name).ok())? {
                notes.push((bb_core::Level::Notice, cli::scope_said(&scope)));
                server_config.scope = Some(std::sync::Arc::new(scope));
            }
            server_config.base_url = config.as_ref().map(|c| c.base_url.clone());
            server_config.highlight_templates = options.highlight_templates;
            if let Some(d) = options.highlight_deadline {
                server_config.highlight_deadline_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            }
            // No line of the log may carry the operator's credentials, whatever echoed them.
            let logger = logger.scrubbing(config.as_ref().map(bb_bitbucket::secrets).unwrap_or_default());
            // What every driver, the client and the transport share, made once here: the metrics and the
            // memory budget.
            let process = bb_drive::Process::new(options.memory_budget.unwrap_or(bb_core::limits::MEMORY_BUDGET));
            // Confirmations' seal and ledger: shared through the rate store when there is one, so a
            // 2026-07-28 retry may go to any replica and is honoured once.
            let store = match config.as_ref().and_then(|c| c.rate_store.as_ref().map(|s| (s, c.ca_file.clone()))) {
                Some((store, ca_file)) => Some(bb_bitbucket::store_client(store, ca_file.as_deref())?),
                None => None,
            };
            let (key, warning) = bb::confirm::key(store.as_ref(), &|name| std::env::var(name).ok())?;
            if let Some(warning) = warning {
                logger.log(bb_core::Level::Warning, &warning);
            }
            server_config.seal = Some(std::sync::Arc::new(bb::confirm::RingSeal::new(&key)));
            let process = match store {
                Some(client) => process.with_ledger(std::sync::Arc::new(bb::confirm::StoreLedger::new(client))),
                None => process,
            };
            let bitbucket = bb_bitbucket::for_config(config.clone(), &logger, process.metrics())?;
            let process = match audit(&options, &process, &logger, options.http.is_some())? {
                Some(trail) => {
                    own_user(&trail, &config, &bitbucket);
                    process.with_audit(trail)
                }
                None => process,
            };
            // The grammars of the languages pull requests carry most compile once per process; compiled here, on a
            // thread of their own, the first diff of a session is not the one that pays for them.
            // Said at debug level, with how long it took: tests/first_diff.rs waits for it.
            let said = logger.clone();
            let started = std::time::Instant::now();
            let _ = std::thread::Builder::new().name("bb-grammars".into()).spawn(move || {
                let _ = bb_core::HighlightJob::prepare_common().run();
                let ms = started.elapsed().as_millis();
                said.log(bb_core::Level::Debug, &format!("grammars of the common languages prepared in {ms} ms"));
            });
            if let Some(http) = &options.http {
                return bb::http::serve_http(
                    http,
                    options.metrics,
                    server_config,
                    &process,
                    config,
                    bitbucket,
                    logger,
                    &notes,
                );
            }
            for (level, said) in &notes {
                logger.log(*level, said);
            }
            if let Some(addr) = options.metrics {
                bb::http::serve_metrics(addr, &[], &process, std::sync::Arc::new(|| {}), &logger)?;
            }
            bb_stdio::serve_stdio(server_config, process, bitbucket, logger, MAX_LINE)
                .map_err(|e| format!("writing to stdout failed: {e}"))
        }
    }
}

/// The audit trail, when `--audit-file` or `BB_AUDIT_FILE` asks for one: opened now (an unwritable
/// path stops bb), its writer started, SIGHUP reopening it.
fn audit(
    options: &cli::ServeOptions,
    process: &bb_drive::Process,
    logger: &Logger,
    http: bool,
) -> Result<Option<bb_drive::AuditTrail>, String> {
    let from_env = || std::env::var("BB_AUDIT_FILE").ok().filter(|v| !v.trim().is_empty());
    let Some(value) = options.audit_file.clone().or_else(from_env) else { return Ok(None) };
    let target = bb::audit::Target::parse(&value)?;
    let failure = if options.audit_warn { bb::audit::Failure::Warn } else { bb::audit::Failure::Refuse };
    let writer = bb::audit::Writer::start(target, failure, std::sync::Arc::clone(process.metrics()), logger.clone())?;
    bb::audit::reopen_on_hangup(&writer)?;
    Ok(Some(bb_drive::AuditTrail::new(writer, if http { "http" } else { "stdio" })))
}

/// Who bb's own credentials are, for the audit trail: the configured user, or for a token the user
/// Bitbucket names in an answer, read once at start (waited for at most 5 s; a session's first
/// answer names it too, should this read fail).
fn own_user(
    trail: &bb_drive::AuditTrail,
    config: &Option<bb_bitbucket::options::BitbucketConfig>,
    bitbucket: &std::sync::Arc<dyn bb_drive::Bitbucket>,
) {
    let Some(config) = config else { return };
    match &config.auth {
        bb_bitbucket::options::Auth::Basic { user, .. } => trail.learn_own_user(user),
        bb_bitbucket::options::Auth::Token(_) => {
            let (trail, bitbucket) = (trail.clone(), std::sync::Arc::clone(bitbucket));
            let (done, wait) = std::sync::mpsc::channel();
            let _ = std::thread::Builder::new().name("bb-whoami".into()).spawn(move || {
                let request = bb_core::FetchRequest::get("/rest/api/latest/application-properties", Vec::new());
                if let bb_core::FetchOutcome::Response(r) = bitbucket.fetch(request, None, &bb_drive::Cancel::new())
                    && let Some(user) = &r.user
                {
                    trail.learn_own_user(user);
                }
                let _ = done.send(());
            });
            let _ = wait.recv_timeout(std::time::Duration::from_secs(5));
        }
        _ => {}
    }
}

fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| format!("writing to stdout failed: {e}"))
}

/// The groups a session may turn on, with the tools each adds, for `bb ai mcp tools`.
fn exposure_offer(catalogue: &Catalogue, exposed: &bb_core::Exposed) -> String {
    let Some(first) = exposed.session_sees(bb_core::Toolsets::NONE) else { return String::new() };
    let mut out = String::new();
    for (group, _) in catalogue.groups() {
        if !first.offerable().contains(group) {
            continue;
        }
        let Some(wider) = exposed.session_sees(bb_core::Toolsets::NONE.with(group)) else { continue };
        let added: Vec<&str> = wider
            .tools()
            .iter()
            .filter(|t| exposed.get(t.name).is_none() && t.role != Role::Session)
            .map(|t| t.name)
            .collect();
        out.push_str(&format!("  {:<14} {}: {}\n", group.name(), group.about(), added.join(", ")));
    }
    out
}
