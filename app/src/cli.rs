//! The command line: `bb ai mcp serve`, `bb ai mcp tools`, `bb --version`, `bb --help`.
//!
//! Parsed with lexopt. Every mistake is an error that says what was wrong and where to look.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::ops::RangeInclusive;

use bb_core::{ExposureOptions, Level, Toolsets};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print the help of a command (`bb --help`, `bb ai mcp serve --help`, …).
    Help(&'static str),
    /// Print the version.
    Version,
    /// Serve MCP over stdio (or Streamable HTTP with `--http`).
    Serve(Box<ServeOptions>),
    /// Print the tools the same flags would expose.
    Tools(ExposureOptions),
}

/// Options of `bb ai mcp serve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// Which tools to expose.
    pub exposure: ExposureOptions,
    /// The least severe level logged to stderr; `None` logs nothing.
    pub log_level: Option<Level>,
    /// `--host` and `--token` (they win over `BITBUCKET_URL` and `BITBUCKET_TOKEN`).
    pub connection: crate::config::ConnectionFlags,
    /// `--http ADDR` and its options: serve Streamable HTTP instead of stdio.
    pub http: Option<HttpServe>,
    /// `--highlight-deadline`: how long highlighting may hold an answer back.
    pub highlight_deadline: Option<std::time::Duration>,
    /// `--highlight-templates`: also highlight with lexers that embed other languages.
    pub highlight_templates: bool,
    /// `--memory-budget`: the memory set aside for large calls (bytes).
    pub memory_budget: Option<u64>,
    /// `--metrics ADDR`: serve Prometheus metrics at http://ADDR/metrics.
    pub metrics: Option<std::net::SocketAddr>,
    /// `--log-format json`: one JSON object per log line instead of text.
    pub log_json: bool,
    /// `--confirm on|off`: whether tools that merge or cannot be undone ask the person first; `None`
    /// when not given (then `BB_CONFIRM`, else on).
    pub confirm: Option<bool>,
    /// `--project KEY` and `--repo KEY/slug`, each repeatable, in order: the admin's scope (else `BB_SCOPE`).
    pub scope: Vec<String>,
    /// `--audit-file PATH|stderr` (checked at start; `None`: `BB_AUDIT_FILE`, else no trail).
    pub audit_file: Option<String>,
    /// `--audit-failure warn`: a write to the trail that fails is logged once and calls go on (else they are refused).
    pub audit_warn: bool,
}

/// The options of `bb ai mcp serve --http ADDR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpServe {
    /// The address to listen on (port 0: any free port).
    pub addr: std::net::SocketAddr,
    /// `--allow-origin`, repeatable.
    pub allow_origins: Vec<String>,
    /// `--allow-host`, repeatable.
    pub allow_hosts: Vec<String>,
    /// `--per-user-token-header NAME`.
    pub per_user_token_header: Option<String>,
    /// `--oauth`: people log in with Bitbucket; bb's public URL (`--public-url`, or the loopback
    /// address bb listens on).
    pub oauth: Option<String>,
    /// `--max-sessions N`.
    pub max_sessions: Option<usize>,
    /// `--session-idle SECONDS`.
    pub session_idle_s: Option<u64>,
    /// `--grace SECONDS`: how long calls in flight may finish after SIGTERM or Ctrl-C.
    pub grace_s: u64,
    /// `--ready-interval SECONDS`: how often `/readyz`'s probe asks Bitbucket.
    pub ready_interval_s: Option<u64>,
    /// `--write-timeout SECONDS`: how long an answer may wait for its client to read any of it.
    pub write_timeout_s: Option<u64>,
    /// `--keep-alive-idle SECONDS`: how long a connection may sit idle between requests.
    pub keepalive_idle_s: Option<u64>,
    /// `--max-connections N`: connections held at once (default: as many as the open-file limit allows).
    pub max_connections: Option<usize>,
    /// `--trusted-proxy CIDR`, repeatable, checked (empty: `BB_TRUSTED_PROXY`, else none).
    pub trusted_proxies: Vec<bb_http::Cidr>,
}

/// How long calls in flight may finish after SIGTERM or Ctrl-C, unless `--grace` says otherwise.
pub const DEFAULT_GRACE_S: u64 = 20;
/// The seconds `--grace` takes: none (stop at once) to an hour.
pub const GRACE_S: RangeInclusive<u64> = 0..=3_600;
/// The seconds `--session-idle` takes: one to a week.
pub const SESSION_IDLE_S: RangeInclusive<u64> = 1..=604_800;
/// The seconds `--ready-interval` takes: one to an hour.
pub const READY_INTERVAL_S: RangeInclusive<u64> = 1..=3_600;
/// The seconds `--write-timeout` takes.
pub const WRITE_TIMEOUT_S: RangeInclusive<u64> = 1..=3_600;
/// The seconds `--keep-alive-idle` takes: one to an hour.
pub const KEEPALIVE_IDLE_S: RangeInclusive<u64> = 1..=3_600;
/// The bytes `--memory-budget` takes: 16 MiB to 1 TiB.
pub const MEMORY_BUDGET: RangeInclusive<u64> = 16 << 20..=1 << 40;

/// The top-level help.
pub const HELP: &str = "\
bb: Bitbucket Data Center from the command line and from AI clients

Usage:
  bb ai mcp serve [OPTIONS]   serve MCP over stdio (for Claude, VS Code, Cursor, any MCP host)
  bb ai mcp tools [OPTIONS]   print the tools `serve` would expose with the same options
  bb --version                print bb's version
  bb --help                   print this help

Run `bb ai mcp serve --help` for the server's options.
";

/// Help of `bb ai mcp serve`.
pub const SERVE_HELP: &str = "\
Serve MCP over stdio: newline-delimited JSON-RPC on stdin and stdout, logs on stderr.
bb stops when stdin closes. With --http ADDR, serve Streamable HTTP instead.

Usage: bb ai mcp serve [OPTIONS]

Options:
  --toolsets A,B      expose these groups of tools (or BB_TOOLSETS): pull_requests, code,
                      builds, repositories, writes; all (every group but writes) or default
                      (pull_requests,code,builds: a reviewer's whole job; the default). show
                      comes with the groups whose views it draws. writes adds, to each group
                      that is on, its tools that cannot be undone (merge, auto-merge, applying
                      a suggestion, setting a build status)
  --dynamic-toolsets on|off
                      on (the default): a session may turn on a group that is off with the
                      enable_toolset tool, and its client is told its tool list changed (never
                      writes); off: every session sees the same list
  --tools A,B         also expose these tools; without --toolsets, only these (show's view
                      companions come with show)
  --exclude A,B       never expose these tools (wins over everything)
  --allow-writes      the same as adding writes to --toolsets
  --read-only         expose only tools that change nothing in Bitbucket (or BB_READ_ONLY=on),
                      whatever --toolsets, --tools, --allow-writes or enable_toolset say; a write
                      tool named in --tools is withheld, and bb says so at start
  --log-level LEVEL   log to stderr at LEVEL and above: debug, info, notice, warning,
                      error, critical, alert, emergency, or off (default: warning)
  --log-format F      text (the default) or json: one JSON object per line on stderr (time,
                      level, event, and the event's fields: call, tool, duration_ms, status)
  --host URL          the Bitbucket server, with its context path if any (wins over BITBUCKET_URL)
  --token TOKEN       a personal access token (wins over BITBUCKET_TOKEN)
  --rate-limit SIZE/RATE
                      bb's budget of each Bitbucket user's rate limit: a bucket of SIZE requests
                      refilled at RATE a second, 60/5 by default (Bitbucket's own defaults), or off;
                      SIZE a whole number from 1 to 1,000,000, RATE from 0.001 to 10,000.
                      The model's calls spend it first; live views refresh with the upper half
                      only, and wait out a 429's Retry-After
  --rate-store URL    keep that budget in Valkey or Redis (redis://host:port[/db] or rediss://),
                      shared by every replica; password in the URL or BB_RATE_STORE_PASSWORD.
                      When it does not answer, each replica keeps 1/N of the budget itself
  --replicas N        how many replicas share the budget (1 to 1024; default: 1)
  --highlight-deadline D
                      how long highlighting a diff may hold its view back, e.g. 150ms (the
                      default) or 1s, at most 60s; past it the rest of the code goes out plain
  --highlight-templates
                      also highlight templates (HTML with script and style, PHP, Vue, Jinja, …),
                      whose lexers cannot be stopped midway; off by default
  --confirm on|off    on (the default; or BB_CONFIRM): tools that merge or cannot be undone ask
                      the person first (merge_pull_request, enable_auto_merge, disable_auto_merge,
                      submit_pr_review approving or saying Needs work, set_build_status,
                      create_tag, apply_pr_suggestion, delete_pr_comment, update_pull_request
                      changing the draft flag); a client that cannot show the question gets an
                      error and nothing is written. off: they run without asking anyone, for an
                      agent that runs with no person present
  --project KEY       keep bb to this project (repeatable; with --repo, or BB_SCOPE=KEY,KEY/slug):
                      a call naming another is refused with a sentence and nothing is read; the
                      dashboard, inbox, search_repositories and search_code are narrowed to it
  --repo KEY/slug     keep bb to this repository (repeatable); with exactly one, a call that names
                      no repository is filled in with it
  --memory-budget SIZE
                      the memory bb sets aside for large calls (diff and compare views), e.g.
                      256MiB (the default) or 1GiB, from 16MiB to 1TiB; past it they wait their
                      turn, and past 64 waiting they are refused with a sentence that says bb is busy
  --metrics ADDR      serve Prometheus metrics at http://ADDR/metrics on a listener of their own:
                      PORT alone is 127.0.0.1:PORT (loopback). No token; no label names a
                      person, token, project or pull request
  --audit-file PATH   write the audit trail, one JSON line per tool call, refusal and confirmation,
                      to PATH (opened at start, 0600, appended; SIGHUP reopens it) or stderr
                      (or BB_AUDIT_FILE); stdout is refused: it carries the protocol
  --audit-failure refuse|warn
                      refuse (the default): after a record cannot be written, tool calls are
                      refused until one is; warn: log a warning once and go on
  -h, --help          print this help

Streamable HTTP (instead of stdio):
  --http ADDR         serve MCP at http://ADDR/mcp, e.g. 127.0.0.1:8080 (port 0: any free port;
                      the URL is the first line on stderr). Off loopback every request needs
                      `Authorization: Bearer` with BB_HTTP_TOKEN, or a token printed at start
  --allow-origin O    also admit web pages from origin O, e.g. https://host.example (repeatable;
                      loopback origins of the port are always admitted)
  --allow-host H      also answer to Host H (name or name:port; repeatable); needed when clients
                      reach bb by a name other than localhost, 127.0.0.1 or [::1]
  --per-user-token-header NAME
                      each session sends its own Bitbucket token in header NAME and bb acts
                      with it for that session only (default: the configured credentials)
  --oauth             people log in with Bitbucket (MCP authorization): each session acts
                      with its person's own Bitbucket grant, never the configured credentials.
                      Needs an incoming application link in Bitbucket: BB_OAUTH_CLIENT_ID and
                      BB_OAUTH_CLIENT_SECRET; with --rate-store, logins are shared by replicas,
                      encrypted with BB_OAUTH_STORE_KEY (64 hex digits); bb's access tokens
                      live BB_OAUTH_ACCESS_TTL (10s to 24h, default 1h). bb asks each person
                      before a client first acts as them (its own consent page)
  --public-url URL    bb's URL as people's browsers and clients reach it, e.g.
                      https://bb.example.com (https unless loopback; default with --oauth: the
                      loopback address bb listens on)
  --max-sessions N    sessions alive at once (default: 4096)
  --max-connections N connections held at once, or BB_MAX_CONNECTIONS (default: as many as the open-file
                      limit holds, two files each after 256, at most 10000; bb raises its soft limit to
                      the hard one at start). At the cap, idle connections are closed first, then ones
                      that never carried a session; only new, unproven connections are refused
  --session-idle S    end a session unused for S seconds, 1 to 604800 (default: 1800)
  --grace S           on SIGTERM or Ctrl-C, stop taking connections, answer /readyz with 503,
                      send no Bitbucket write not already sent, and let calls in flight finish
                      for up to S seconds, 0 to 3600 (default: 20); the rest are told bb is
                      restarting.
                      A second signal stops bb at once (exit code 1)
  --ready-interval S  from the first GET /readyz on, ask Bitbucket one cheap read every S seconds
                      (1 to 3600; default: 10); /healthz and /readyz need no token and cost no Bitbucket request
  --write-timeout S   close a connection whose client reads less than 64 KB of an answer in S seconds
                      (1 to 3600; default: 30); until written, answers count against --memory-budget
  --keep-alive-idle S keep a connection open S seconds between requests (1 to 3600; default: 75), so a
                      client between two refreshes keeps it; a request head, once begun, must arrive
                      within 15 s
  --trusted-proxy CIDR
                      a load balancer bb sits behind, as an address (10.0.0.5) or a network
                      (10.0.0.0/8, fd00::/8); repeatable, or BB_TRUSTED_PROXY=A,B. From it
                      only, bb counts each person by the right-most address in X-Forwarded-For
                      that is no trusted proxy (haproxy: option forwardfor), or by the source of a
                      PROXY protocol v2 header (send-proxy-v2), for the limits kept per address; its
                      own address holds no share of connections. From anyone else both are ignored
";

/// Help of `bb ai mcp tools`.
pub const TOOLS_HELP: &str = "\
Print the tools `bb ai mcp serve` would expose with the same options, one line each.

Usage: bb ai mcp tools [--toolsets A,B] [--dynamic-toolsets on|off] [--tools A,B] [--exclude A,B] [--allow-writes]
                      [--read-only]

Each line: the tool, its group, whether it reads or writes, whether it asks the person first
(never, always, or when), its title. Then the groups a session
may turn on with enable_toolset, and their tools. BB_TOOLSETS and BB_READ_ONLY are read as serve
reads them; with --read-only, the write tools --tools names are said on stderr, withheld.
";

/// Parses the command line (without the program name).
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Command, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_iter(std::iter::once(OsString::from("bb")).chain(args));
    let mut words: Vec<String> = Vec::new();
    let mut exposure = ExposureOptions::default();
    let mut log_level = Some(Level::Warning);
    let mut highlight_deadline = None;
    let mut highlight_templates = false;
    let mut memory_budget = None;
    let mut metrics = None;
    let mut log_json = false;
    let mut confirm = None;
    let mut scope: Vec<String> = Vec::new();
    let (mut audit_file, mut audit_warn) = (None, false);
    let mut connection = crate::config::ConnectionFlags::default();
    let mut http: Option<std::net::SocketAddr> = None;
    let mut http_flags = HttpServe {
        addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        allow_origins: Vec::new(),
        allow_hosts: Vec::new(),
        per_user_token_header: None,
        oauth: None,
        max_sessions: None,
        session_idle_s: None,
        grace_s: DEFAULT_GRACE_S,
        ready_interval_s: None,
        write_timeout_s: None,
        keepalive_idle_s: None,
        max_connections: None,
        trusted_proxies: Vec::new(),
    };
    let mut help = false;
    let mut seen_options: Vec<&'static str> = Vec::new();
    let (mut oauth, mut public_url) = (false, None::<String>);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Value(word) => {
                let word = word.into_string().map_err(|w| format!("`{}` is not valid text", w.to_string_lossy()))?;
                words.push(word);
            }
            Long("version") | Short('V') if words.is_empty() => return Ok(Command::Version),
            Long("help") | Short('h') => help = true,
            Long("tools") => {
                let list = parser.value().map_err(|e| e.to_string())?;
                exposure.tools.get_or_insert_with(BTreeSet::new).extend(split_names(list, "--tools")?);
                seen_options.push("--tools");
            }
            Long("exclude") => {
                let list = parser.value().map_err(|e| e.to_string())?;
                exposure.exclude.extend(split_names(list, "--exclude")?);
                seen_options.push("--exclude");
            }
            Long("allow-writes") => {
                exposure.allow_writes = true;
                seen_options.push("--allow-writes");
            }
            Long("read-only") => {
                exposure.read_only = true;
                seen_options.push("--read-only");
            }
            Long("toolsets") => {
                let list = plain(parser.value().map_err(|e| e.to_string())?, "--toolsets")?;
                let named = Toolsets::parse_list(&list).map_err(|e| format!("--toolsets {e}"))?;
                exposure.toolsets = Some(exposure.toolsets.unwrap_or_default().union(named));
                seen_options.push("--toolsets");
            }
            Long("dynamic-toolsets") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--dynamic-toolsets")?;
                exposure.dynamic = match value.to_ascii_lowercase().as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("--dynamic-toolsets `{value}` is not on or off")),
                };
                seen_options.push("--dynamic-toolsets");
            }
            Long("log-format") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--log-format")?;
                log_json = match value.to_ascii_lowercase().as_str() {
                    "json" => true,
                    "text" => false,
                    _ => return Err(format!("--log-format `{value}` is not a format: use text (the default) or json")),
                };
                seen_options.push("--log-format");
            }
            Long(flag @ ("project" | "repo")) => {
                let name = if flag == "repo" { "--repo" } else { "--project" };
                let value = plain(parser.value().map_err(|e| e.to_string())?, name)?;
                scope.push(scope_flag(name == "--repo", &value)?);
                seen_options.push(name);
            }
            Long("audit-file") => {
                audit_file = Some(plain(parser.value().map_err(|e| e.to_string())?, "--audit-file")?);
                seen_options.push("--audit-file");
            }
            Long("audit-failure") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--audit-failure")?;
                audit_warn = match value.to_ascii_lowercase().as_str() {
                    "refuse" => false,
                    "warn" => true,
                    _ => return Err(format!("--audit-failure `{value}` is not refuse or warn")),
                };
                seen_options.push("--audit-failure");
            }
            Long("confirm") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--confirm")?;
                confirm = Some(on_off(&value).ok_or_else(|| format!("--confirm `{value}` is not on or off"))?);
                seen_options.push("--confirm");
            }
            Long("log-level") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                let value = value.to_string_lossy().into_owned();
                log_level = if value.eq_ignore_ascii_case("off") {
                    None
                } else {
                    Some(Level::parse(&value).ok_or_else(|| {
                        format!("--log-level `{value}` is not a level: use debug, info, notice, warning, error, critical, alert, emergency or off")
                    })?)
                };
                seen_options.push("--log-level");
            }
            Long("host") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                connection.host = Some(value.into_string().map_err(|_| "--host takes a URL in plain text".to_owned())?);
                seen_options.push("--host");
            }
            Long("token") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                let token = value.into_string().map_err(|_| "--token takes the token in plain text".to_owned())?;
                connection.token = Some(crate::config::Secret::new(token));
                seen_options.push("--token");
            }
            Long("rate-limit") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--rate-limit")?;
                if value.trim() != "off" {
                    crate::config::RateLimit::parse(&value)?;
                }
                connection.rate_limit = Some(value);
                seen_options.push("--rate-limit");
            }
            Long("rate-store") => {
                connection.rate_store = Some(crate::config::Secret::new(plain(
                    parser.value().map_err(|e| e.to_string())?,
                    "--rate-store",
                )?));
                seen_options.push("--rate-store");
            }
            Long("replicas") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--replicas")?;
                let n = value.trim().parse::<u32>().ok().filter(|n| (1..=1024).contains(n));
                connection.replicas =
                    Some(n.ok_or_else(|| format!("--replicas `{value}` is not a number from 1 to 1024"))?);
                seen_options.push("--replicas");
            }
            Long("highlight-deadline") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--highlight-deadline")?;
                let d = crate::config::parse_duration(&value)
                    .filter(|d| *d <= std::time::Duration::from_secs(60))
                    .ok_or_else(|| {
                        format!("--highlight-deadline `{value}` is not a duration from 1 ms to at most 60 s, such as 150ms or 1s")
                    })?;
                highlight_deadline = Some(d);
                seen_options.push("--highlight-deadline");
            }
            Long("memory-budget") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--memory-budget")?;
                let bytes = parse_size(&value).filter(|b| MEMORY_BUDGET.contains(b)).ok_or_else(|| {
                    format!("--memory-budget `{value}` is not a size of at least 16MiB and at most 1TiB, such as 256MiB or 1GiB")
                })?;
                memory_budget = Some(bytes);
                seen_options.push("--memory-budget");
            }
            Long("highlight-templates") => {
                highlight_templates = true;
                seen_options.push("--highlight-templates");
            }
            Long("http") => {
                let value = parser.value().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
                http = Some(parse_listen_addr(&value)?);
                seen_options.push("--http");
            }
            Long("allow-origin") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--allow-origin")?;
                if !value.starts_with("http://") && !value.starts_with("https://") {
                    return Err(format!(
                        "--allow-origin `{value}` is not an origin: use scheme://host[:port], such as https://host.example"
                    ));
                }
                http_flags.allow_origins.push(value);
                seen_options.push("--allow-origin");
            }
            Long("allow-host") => {
                http_flags.allow_hosts.push(plain(parser.value().map_err(|e| e.to_string())?, "--allow-host")?);
                seen_options.push("--allow-host");
            }
            Long("per-user-token-header") => {
                let name = plain(parser.value().map_err(|e| e.to_string())?, "--per-user-token-header")?;
                let lower = name.to_ascii_lowercase();
                let reserved = ["authorization", "host", "origin", "content-type", "accept", "cookie"];
                if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
                    return Err(format!("--per-user-token-header `{name}` is not an HTTP header name"));
                }
                if reserved.contains(&lower.as_str()) || lower.starts_with("mcp-") {
                    return Err(format!(
                        "--per-user-token-header `{name}` is a header HTTP or MCP already uses; pick another, such as X-Bitbucket-Token"
                    ));
                }
                http_flags.per_user_token_header = Some(name);
                seen_options.push("--per-user-token-header");
            }
            Long("oauth") => {
                oauth = true;
                seen_options.push("--oauth");
            }
            Long("public-url") => {
                public_url = Some(plain(parser.value().map_err(|e| e.to_string())?, "--public-url")?);
                seen_options.push("--public-url");
            }
            Long("max-sessions") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--max-sessions")?;
                let n = value.parse::<usize>().ok().filter(|n| *n > 0);
                http_flags.max_sessions =
                    Some(n.ok_or_else(|| format!("--max-sessions `{value}` is not a positive number"))?);
                seen_options.push("--max-sessions");
            }
            Long("max-connections") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--max-connections")?;
                http_flags.max_connections = Some(crate::files::parse_max_connections(&value, "--max-connections")?);
                seen_options.push("--max-connections");
            }
            Long("metrics") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--metrics")?;
                let loopback = value.parse::<u16>().ok().map(|port| std::net::SocketAddr::from(([127, 0, 0, 1], port)));
                metrics = Some(match loopback {
                    Some(a) => a,
                    None => parse_listen_addr(&value).map_err(|e| e.replacen("--http", "--metrics", 1))?,
                });
                seen_options.push("--metrics");
            }
            Long("grace") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--grace")?;
                http_flags.grace_s = seconds(&value, "--grace", GRACE_S)?;
                seen_options.push("--grace");
            }
            Long("ready-interval") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--ready-interval")?;
                http_flags.ready_interval_s = Some(seconds(&value, "--ready-interval", READY_INTERVAL_S)?);
                seen_options.push("--ready-interval");
            }
            Long("keep-alive-idle") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--keep-alive-idle")?;
                http_flags.keepalive_idle_s = Some(seconds(&value, "--keep-alive-idle", KEEPALIVE_IDLE_S)?);
                seen_options.push("--keep-alive-idle");
            }
            Long("write-timeout") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--write-timeout")?;
                http_flags.write_timeout_s = Some(seconds(&value, "--write-timeout", WRITE_TIMEOUT_S)?);
                seen_options.push("--write-timeout");
            }
            Long("trusted-proxy") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--trusted-proxy")?;
                http_flags
                    .trusted_proxies
                    .push(bb_http::Cidr::parse(&value).map_err(|e| format!("--trusted-proxy {e}"))?);
                seen_options.push("--trusted-proxy");
            }
            Long("session-idle") => {
                let value = plain(parser.value().map_err(|e| e.to_string())?, "--session-idle")?;
                http_flags.session_idle_s = Some(seconds(&value, "--session-idle", SESSION_IDLE_S)?);
                seen_options.push("--session-idle");
            }
            other => {
                let place = if words.is_empty() { "bb".to_owned() } else { format!("bb {}", words.join(" ")) };
                return Err(format!("{} is not an option of `{place}`; see `{place} --help`", other.unexpected()));
            }
        }
    }
    let path: Vec<&str> = words.iter().map(String::as_str).collect();
    match path.as_slice() {
        [] if help => Ok(Command::Help(HELP)),
        [] => Err("no command given; see `bb --help`".into()),
        ["ai"] | ["ai", "mcp"] if help => Ok(Command::Help(HELP)),
        ["ai", "mcp", "serve"] if help => Ok(Command::Help(SERVE_HELP)),
        ["ai", "mcp", "tools"] if help => Ok(Command::Help(TOOLS_HELP)),
        ["ai", "mcp", "serve"] => {
            if public_url.is_some() && !oauth {
                return Err("--public-url applies to --oauth: add --oauth".into());
            }
            if oauth && http_flags.per_user_token_header.is_some() {
                return Err("--oauth and --per-user-token-header do not go together: pick one way for people to bring their Bitbucket identity".into());
            }
            let http = match http {
                Some(addr) => {
                    let oauth = match (oauth, public_url) {
                        (false, _) => None,
                        (true, Some(url)) => Some(url),
                        (true, None) if addr.ip().is_loopback() && addr.port() != 0 => Some(format!("http://{addr}")),
                        (true, None) => {
                            return Err(
                                "--oauth needs --public-url URL: the address people's browsers and clients reach bb at"
                                    .into(),
                            );
                        }
                    };
                    Some(HttpServe { addr, oauth, ..http_flags })
                }
                None => {
                    if let Some(flag) = seen_options.iter().find(|f| HTTP_ONLY.contains(f)) {
                        return Err(format!("{flag} applies to the HTTP server: add --http ADDR"));
                    }
                    None
                }
            };
            Ok(Command::Serve(Box::new(ServeOptions {
                exposure,
                log_level,
                connection,
                http,
                highlight_deadline,
                highlight_templates,
                memory_budget,
                metrics,
                log_json,
                confirm,
                scope,
                audit_file,
                audit_warn,
            })))
        }
        ["ai", "mcp", "tools"] => {
            if let Some(flag) = seen_options.iter().find(|f| {
                matches!(
                    **f,
                    "--log-level"
                        | "--log-format"
                        | "--confirm"
                        | "--host"
                        | "--token"
                        | "--http"
                        | "--metrics"
                        | "--project"
                        | "--repo"
                        | "--audit-file"
                        | "--audit-failure"
                ) || HTTP_ONLY.contains(f)
            }) {
                return Err(format!("{flag} is not an option of `bb ai mcp tools`; see `bb ai mcp tools --help`"));
            }
            Ok(Command::Tools(exposure))
        }
        _ => Err(format!("`bb {}` is not a command; see `bb --help`", words.join(" "))),
    }
}

/// The flags that only mean something with `--http`.
const HTTP_ONLY: [&str; 13] = [
    "--oauth",
    "--public-url",
    "--allow-origin",
    "--allow-host",
    "--per-user-token-header",
    "--max-sessions",
    "--max-connections",
    "--session-idle",
    "--grace",
    "--ready-interval",
    "--write-timeout",
    "--keep-alive-idle",
    "--trusted-proxy",
];

/// on/off, true/false, 1/0.
fn on_off(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Some(true),
        "off" | "false" | "0" => Some(false),
        _ => None,
    }
}

/// Whether tools that merge or cannot be undone ask: `--confirm`, else `BB_CONFIRM` (on/off,
/// true/false, 1/0), else on.
pub fn confirm_from_env(flag: Option<bool>, env: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    if let Some(on) = flag {
        return Ok(on);
    }
    match env("BB_CONFIRM").filter(|v| !v.trim().is_empty()) {
        None => Ok(true),
        Some(v) => on_off(&v).ok_or_else(|| format!("BB_CONFIRM `{}` is not on or off", v.trim())),
    }
}

/// What bb says at start when the server is read-only, and of the write tools `--tools` named (withheld).
pub fn read_only_said(withheld: &[&str]) -> String {
    let mut s = String::from("--read-only: bb exposes only tools that change nothing in Bitbucket");
    if !withheld.is_empty() {
        s.push_str(&format!(
            "; --tools names {}, which change Bitbucket: not exposed, and a call to one is refused",
            withheld.join(", ")
        ));
    }
    s
}

/// One `--project KEY` or `--repo KEY/slug`, checked as a scope entry: a repository given to `--project`
/// or a project to `--repo` is an error sentence.
fn scope_flag(repo: bool, value: &str) -> Result<String, String> {
    match (repo, value.contains('/')) {
        (false, true) => return Err(format!("--project `{value}` names a repository: use --repo {value}")),
        (true, false) => {
            return Err(format!("--repo `{value}` names no repository: use KEY/slug, or --project {value}"));
        }
        _ => {}
    }
    bb_core::Scope::parse([value])?;
    Ok(value.to_owned())
}

/// The admin's scope: `--project` and `--repo` entries, else `BB_SCOPE` (comma-separated `KEY` and
/// `KEY/slug`); `None` when neither names one. A malformed entry is an error sentence.
pub fn scope_from_env(
    flags: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<bb_core::Scope>, String> {
    if !flags.is_empty() {
        return bb_core::Scope::parse(flags.iter().map(String::as_str)).map(Some);
    }
    let Some(value) = env("BB_SCOPE").filter(|v| !v.trim().is_empty()) else { return Ok(None) };
    let entries = value.split(',').map(str::trim).filter(|e| !e.is_empty());
    bb_core::Scope::parse(entries).map(Some).map_err(|e| format!("BB_SCOPE: {e}"))
}

/// The proxies bb believes: `--trusted-proxy` entries, else `BB_TRUSTED_PROXY` (comma-separated
/// addresses and networks); none when neither names one. A malformed entry is an error sentence.
pub fn trusted_proxies_from_env(
    flags: &[bb_http::Cidr],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<bb_http::TrustedProxies, String> {
    if !flags.is_empty() {
        return Ok(bb_http::TrustedProxies::new(flags.to_vec()));
    }
    let Some(value) = env("BB_TRUSTED_PROXY").filter(|v| !v.trim().is_empty()) else {
        return Ok(bb_http::TrustedProxies::default());
    };
    let entries = value.split(',').map(str::trim).filter(|e| !e.is_empty());
    let cidrs = entries.map(|e| bb_http::Cidr::parse(e).map_err(|why| format!("BB_TRUSTED_PROXY {why}")));
    cidrs.collect::<Result<Vec<_>, _>>().map(bb_http::TrustedProxies::new)
}

/// What bb logs once at start when it trusts proxies.
pub fn trusted_proxies_said(proxies: &bb_http::TrustedProxies) -> String {
    format!(
        "trusted proxies: {}; from them only, X-Forwarded-For and PROXY protocol v2 headers name each person",
        proxies.words()
    )
}

/// What bb logs once at start with a scope.
pub fn scope_said(scope: &bb_core::Scope) -> String {
    format!(
        "scope: {}; calls naming any other repository are refused, the dashboard, inbox and searches narrowed",
        scope.words()
    )
}

/// What bb logs once at start with `--confirm off`.
pub const CONFIRM_OFF: &str = "--confirm off: tools that merge or cannot be undone run without asking anyone (for an agent \
                               that runs with no person present)";

fn plain(value: OsString, flag: &str) -> Result<String, String> {
    value.into_string().map(|v| v.trim().to_owned()).map_err(|_| format!("{flag} takes plain text"))
}

/// `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`.
fn parse_listen_addr(value: &str) -> Result<std::net::SocketAddr, String> {
    let value = value.trim();
    let local = value.strip_prefix("localhost:").map(|port| format!("127.0.0.1:{port}"));
    local.as_deref().unwrap_or(value).parse().map_err(|_| {
        format!("--http `{value}` is not an address to listen on: use IP:PORT, such as 127.0.0.1:8080 (port 0: any free port)")
    })
}

/// `BB_TOOLSETS`, read when `--toolsets` is not given (the flag wins, as `--host` over `BITBUCKET_URL`), and
/// `BB_READ_ONLY` (on/off, true/false, 1/0), which `--read-only` turns on whatever it says.
pub fn toolsets_from_env(exposure: &mut ExposureOptions, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    if !exposure.read_only
        && let Some(v) = env("BB_READ_ONLY").filter(|v| !v.trim().is_empty())
    {
        exposure.read_only = on_off(&v).ok_or_else(|| format!("BB_READ_ONLY `{}` is not on or off", v.trim()))?;
    }
    if exposure.toolsets.is_some() {
        return Ok(());
    }
    if let Some(list) = env("BB_TOOLSETS").filter(|l| !l.trim().is_empty()) {
        exposure.toolsets = Some(Toolsets::parse_list(&list).map_err(|e| format!("BB_TOOLSETS {e}"))?);
    }
    Ok(())
}

fn split_names(list: OsString, flag: &str) -> Result<Vec<String>, String> {
    let list = list.into_string().map_err(|_| format!("{flag} takes tool names in plain text"))?;
    let names: Vec<String> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if names.is_empty() {
        return Err(format!("{flag} needs at least one tool name, such as {flag} get_pull_request"));
    }
    Ok(names)
}

/// A size as the operator writes it: a number of bytes, or with `KiB`, `MiB`, `GiB` (or `K`, `M`, `G`,
/// `KB`, `MB`, `GB`, read as the binary units).
/// A whole number of seconds in `range` for `flag`, or a sentence naming the flag and the range.
fn seconds(value: &str, flag: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    value.trim().parse::<u64>().ok().filter(|s| range.contains(s)).ok_or_else(|| {
        format!("{flag} `{value}` is not a whole number of seconds from {} to {}", range.start(), range.end())
    })
}

fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().ok()?;
    let unit: u64 = match t[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn toolsets_come_from_the_flag_repeated_or_else_from_bb_toolsets() {
        let Command::Serve(o) = p(&["ai", "mcp", "serve", "--toolsets", "code", "--toolsets=builds,writes"]).unwrap()
        else {
            panic!()
        };
        let mut exposure = o.exposure;
        assert_eq!(exposure.toolsets.unwrap().names(), ["code", "builds", "writes"]);
        let env = |k: &str| (k == "BB_TOOLSETS").then(|| "repositories".to_string());
        toolsets_from_env(&mut exposure, &env).unwrap();
        assert_eq!(exposure.toolsets.unwrap().names(), ["code", "builds", "writes"], "the flag wins");
        let mut none = ExposureOptions::default();
        toolsets_from_env(&mut none, &env).unwrap();
        assert_eq!(none.toolsets.unwrap().names(), ["repositories"]);
        let bad = |k: &str| (k == "BB_TOOLSETS").then(|| "code,issues".to_string());
        let e = toolsets_from_env(&mut ExposureOptions::default(), &bad).unwrap_err();
        assert!(e.starts_with("BB_TOOLSETS `issues` is not a toolset."), "{e}");
        let e = p(&["ai", "mcp", "serve", "--toolsets", "everything"]).unwrap_err();
        assert!(e.starts_with("--toolsets `everything` is not a toolset."), "{e}");
        assert!(p(&["ai", "mcp", "serve", "--toolsets", ","]).unwrap_err().contains("names no toolset"));
    }

    #[test]
    fn dynamic_toolsets_is_on_or_off() {
        let Command::Serve(o) = p(&["ai", "mcp", "serve"]).unwrap() else { panic!() };
        assert!(o.exposure.dynamic);
        let Command::Serve(o) = p(&["ai", "mcp", "serve", "--dynamic-toolsets", "off"]).unwrap() else { panic!() };
        assert!(!o.exposure.dynamic);
        let Command::Tools(e) = p(&["ai", "mcp", "tools", "--dynamic-toolsets", "ON"]).unwrap() else { panic!() };
        assert!(e.dynamic);
        assert!(p(&["ai", "mcp", "serve", "--dynamic-toolsets", "maybe"]).unwrap_err().contains("is not on or off"));
    }

    #[test]
    fn serve_takes_exposure_flags_and_a_log_level() {
        let Command::Serve(o) = p(&[
            "ai",
            "mcp",
            "serve",
            "--tools",
            "a,b",
            "--tools=c",
            "--exclude",
            "d",
            "--allow-writes",
            "--log-level",
            "debug",
        ])
        .unwrap() else {
            panic!("expected serve");
        };
        assert_eq!(o.exposure.tools.unwrap().into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(o.exposure.exclude.into_iter().collect::<Vec<_>>(), ["d"]);
        assert!(o.exposure.allow_writes);
        assert_eq!(o.log_level, Some(Level::Debug));
    }

    #[test]
    fn the_default_log_level_is_warning_and_off_logs_nothing() {
        let Command::Serve(o) = p(&["ai", "mcp", "serve"]).unwrap() else { panic!() };
        assert_eq!(o.log_level, Some(Level::Warning));
        let Command::Serve(o) = p(&["ai", "mcp", "serve", "--log-level=off"]).unwrap() else { panic!() };
        assert_eq!(o.log_level, None);
    }

    #[test]
    fn an_unknown_flag_is_named_with_where_to_look() {
        let e = p(&["ai", "mcp", "serve", "--frobnicate"]).unwrap_err();
        assert!(e.contains("--frobnicate"), "{e}");
        assert!(e.contains("bb ai mcp serve --help"), "{e}");
    }

    #[test]
    fn an_unknown_command_points_to_help() {
        assert_eq!(p(&["ai", "mcp", "dance"]).unwrap_err(), "`bb ai mcp dance` is not a command; see `bb --help`");
        assert!(p(&[]).unwrap_err().contains("bb --help"));
    }

    #[test]
    fn help_and_version_are_recognised_everywhere_they_belong() {
        assert_eq!(p(&["--help"]).unwrap(), Command::Help(HELP));
        assert_eq!(p(&["--version"]).unwrap(), Command::Version);
        assert_eq!(p(&["ai", "mcp", "serve", "-h"]).unwrap(), Command::Help(SERVE_HELP));
        assert_eq!(p(&["ai", "mcp", "tools", "--help"]).unwrap(), Command::Help(TOOLS_HELP));
    }

    #[test]
    fn a_bad_log_level_or_empty_tool_list_is_refused() {
        assert!(p(&["ai", "mcp", "serve", "--log-level", "loud"]).unwrap_err().contains("not a level"));
        assert!(p(&["ai", "mcp", "serve", "--tools", ","]).unwrap_err().contains("at least one tool name"));
        assert!(p(&["ai", "mcp", "serve", "--tools"]).unwrap_err().contains("--tools"));
    }

    #[test]
    fn serve_takes_a_host_and_a_token_that_debug_output_hides() {
        let args = ["ai", "mcp", "serve", "--host", "https://h/bb", "--token=s3cret-tok"];
        let Command::Serve(o) = p(&args).unwrap() else {
            panic!("expected serve");
        };
        assert_eq!(o.connection.host.as_deref(), Some("https://h/bb"));
        assert_eq!(o.connection.token.as_ref().map(|t| t.expose()), Some("s3cret-tok"));
        assert!(!format!("{o:?}").contains("s3cret-tok"));
        assert!(p(&["ai", "mcp", "tools", "--token", "t"]).unwrap_err().contains("--token is not an option"));
    }

    #[test]
    fn oauth_takes_a_public_url_or_the_loopback_address_bb_listens_on() {
        let serve = |args: &[&str]| match p(args) {
            Ok(Command::Serve(o)) => Ok(o.http.and_then(|h| h.oauth)),
            Ok(_) => Err("not serve".to_owned()),
            Err(e) => Err(e),
        };
        let base = ["ai", "mcp", "serve", "--http"];
        let with = |rest: &[&'static str]| base.iter().chain(rest).copied().collect::<Vec<_>>();
        assert_eq!(
            serve(&with(&["0.0.0.0:8080", "--oauth", "--public-url", "https://bb.example.com"])).unwrap().as_deref(),
            Some("https://bb.example.com")
        );
        assert_eq!(serve(&with(&["127.0.0.1:8080", "--oauth"])).unwrap().as_deref(), Some("http://127.0.0.1:8080"));
        assert!(serve(&with(&["0.0.0.0:8080", "--oauth"])).unwrap_err().contains("--oauth needs --public-url"));
        assert!(serve(&with(&["127.0.0.1:0", "--public-url", "https://x"])).unwrap_err().contains("add --oauth"));
        let both = with(&["127.0.0.1:8080", "--oauth", "--per-user-token-header", "X-Bitbucket-Token"]);
        assert!(serve(&both).unwrap_err().contains("do not go together"));
        assert!(p(&["ai", "mcp", "serve", "--oauth"]).unwrap_err().contains("--oauth applies to the HTTP server"));
    }

    #[test]
    fn trusted_proxies_come_from_the_flag_repeated_or_else_from_bb_trusted_proxy() {
        let serve = |args: &[&str]| match p(args) {
            Ok(Command::Serve(o)) => Ok(o.http.map(|h| h.trusted_proxies).unwrap_or_default()),
            Ok(_) => Err("not serve".to_owned()),
            Err(e) => Err(e),
        };
        let base = ["ai", "mcp", "serve", "--http", "127.0.0.1:0"];
        let with = |rest: &[&'static str]| base.iter().chain(rest).copied().collect::<Vec<_>>();
        let flags = serve(&with(&["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy=::1"])).unwrap();
        let env = |k: &str| (k == "BB_TRUSTED_PROXY").then(|| " 192.0.2.7, fd00::/8 ,".to_string());
        assert_eq!(trusted_proxies_from_env(&flags, &env).unwrap().words(), "10.0.0.0/8, ::1/128", "the flag wins");
        assert_eq!(trusted_proxies_from_env(&[], &env).unwrap().words(), "192.0.2.7/32, fd00::/8");
        assert!(trusted_proxies_from_env(&[], &|_| None).unwrap().is_empty());
        let e = serve(&with(&["--trusted-proxy", "haproxy.internal"])).unwrap_err();
        assert!(e.starts_with("--trusted-proxy `haproxy.internal` is not an address or network"), "{e}");
        let e = serve(&with(&["--trusted-proxy", "10.0.0.1/8"])).unwrap_err();
        assert!(e.contains("the network is 10.0.0.0/8"), "{e}");
        let bad = |k: &str| (k == "BB_TRUSTED_PROXY").then(|| "10.0.0.0/8,10.0.0.0/40".to_string());
        let e = trusted_proxies_from_env(&[], &bad).unwrap_err();
        assert!(e.starts_with("BB_TRUSTED_PROXY `10.0.0.0/40` has a prefix longer"), "{e}");
        let e = p(&["ai", "mcp", "serve", "--trusted-proxy", "10.0.0.5"]).unwrap_err();
        assert!(e.contains("--trusted-proxy applies to the HTTP server"), "{e}");
    }

    #[test]
    fn serve_takes_http_flags_only_with_http() {
        let Command::Serve(o) = p(&[
            "ai",
            "mcp",
            "serve",
            "--http",
            "localhost:0",
            "--allow-origin",
            "https://host.example",
            "--allow-origin=http://127.0.0.1:9000",
            "--allow-host",
            "bb.example.com",
            "--per-user-token-header",
            "X-Bitbucket-Token",
            "--max-sessions",
            "10",
            "--session-idle",
            "60",
            "--max-connections",
            "2000",
        ])
        .unwrap() else {
            panic!("expected serve");
        };
        let h = o.http.unwrap();
        assert_eq!(h.addr, "127.0.0.1:0".parse().unwrap());
        assert_eq!(h.allow_origins, ["https://host.example", "http://127.0.0.1:9000"]);
        assert_eq!(h.allow_hosts, ["bb.example.com"]);
        assert_eq!(h.per_user_token_header.as_deref(), Some("X-Bitbucket-Token"));
        assert_eq!((h.max_sessions, h.session_idle_s), (Some(10), Some(60)));
        assert_eq!(h.max_connections, Some(2000));
        let Command::Serve(o) = p(&["ai", "mcp", "serve"]).unwrap() else { panic!() };
        assert_eq!(o.http, None);
        assert!(p(&["ai", "mcp", "serve", "--allow-origin", "https://a.example"]).unwrap_err().contains("add --http"));
    }

    #[test]
    fn bad_http_flags_are_refused_with_what_to_use() {
        assert!(p(&["ai", "mcp", "serve", "--http", "8080"]).unwrap_err().contains("IP:PORT"));
        assert!(p(&["ai", "mcp", "serve", "--http", "[::1]:0"]).is_ok());
        let e = p(&["ai", "mcp", "serve", "--http", ":0", "--allow-origin", "host.example"]).unwrap_err();
        assert!(e.contains("not an address") || e.contains("not an origin"), "{e}");
        let e = p(&["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--per-user-token-header", "Authorization"]);
        assert!(e.unwrap_err().contains("already uses"));
        assert!(p(&["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--max-sessions", "0"]).is_err());
        let e = p(&["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--max-connections", "lots"]).unwrap_err();
        assert!(e.contains("--max-connections `lots` is not a positive number"), "{e}");
        assert!(p(&["ai", "mcp", "serve", "--max-connections", "10"]).unwrap_err().contains("add --http"));
        assert!(p(&["ai", "mcp", "tools", "--http", "127.0.0.1:0"]).unwrap_err().contains("not an option"));
    }

    #[test]
    fn tools_refuses_serve_only_flags() {
        assert!(
            p(&["ai", "mcp", "tools", "--log-level", "info"])
                .unwrap_err()
                .contains("not an option of `bb ai mcp tools`")
        );
    }

    #[test]
    fn the_highlight_flags_set_the_deadline_and_the_template_lexers() {
        let Command::Serve(o) =
            p(&["ai", "mcp", "serve", "--highlight-deadline", "400ms", "--highlight-templates"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(o.highlight_deadline, Some(std::time::Duration::from_millis(400)));
        assert!(o.highlight_templates);
        assert!(p(&["ai", "mcp", "serve", "--highlight-deadline", "5m"]).unwrap_err().contains("at most 60 s"));
    }

    #[test]
    fn the_rate_limit_is_size_slash_rate_or_off() {
        let Command::Serve(o) = p(&["ai", "mcp", "serve", "--rate-limit", "120/10"]).unwrap() else { panic!() };
        assert_eq!(o.connection.rate_limit.as_deref(), Some("120/10"));
        let Command::Serve(o) = p(&["ai", "mcp", "serve", "--rate-limit", "off"]).unwrap() else { panic!() };
        assert_eq!(o.connection.rate_limit.as_deref(), Some("off"));
        for bad in ["60", "fast", ""] {
            assert!(p(&["ai", "mcp", "serve", "--rate-limit", bad]).unwrap_err().contains("SIZE/RATE"), "{bad}");
        }
    }

    #[test]
    fn every_duration_size_and_rate_flag_refuses_the_extremes_naming_itself_and_its_range() {
        let extremes = ["0", "-1", "NaN", "inf", "1e-300", "1e300", "18446744073709551615", "18446744073709551616", ""];
        let refused = |flag: &str, value: &str, range: &str| {
            let e = p(&["ai", "mcp", "serve", flag, value]).unwrap_err();
            assert!(e.contains(flag) && e.contains(range), "{flag} {value}: {e}");
        };
        for x in extremes {
            let (rate, bucket) = if x.is_empty() {
                ("is not SIZE/RATE", "is not SIZE/RATE")
            } else {
                ("from 0.001 to 10,000 requests a second", "from 1 to 1,000,000")
            };
            refused("--rate-limit", &format!("2/{x}"), rate);
            refused("--rate-limit", &format!("{x}/5"), bucket);
            refused("--highlight-deadline", x, "at most 60 s");
            refused("--memory-budget", x, "at least 16MiB and at most 1TiB");
            if x != "0" {
                refused("--grace", x, "from 0 to 3600");
            }
            refused("--session-idle", x, "from 1 to 604800");
            refused("--ready-interval", x, "from 1 to 3600");
            refused("--write-timeout", x, "from 1 to 3600");
        }
        refused("--rate-limit", "2/1e-300", "from 0.001 to 10,000");
        refused("--memory-budget", "2TiB", "at most 1TiB");
        refused("--memory-budget", "1025GiB", "at most 1TiB");
        refused("--grace", "3601", "from 0 to 3600");
        refused("--session-idle", "604801", "from 1 to 604800");
        refused("--ready-interval", "3601", "from 1 to 3600");
        refused("--write-timeout", "3601", "from 1 to 3600");
        // The ends of each range are taken.
        for (flag, value) in [
            ("--rate-limit", "1/0.001"),
            ("--rate-limit", "1000000/10000"),
            ("--grace", "0"),
            ("--grace", "3600"),
            ("--session-idle", "604800"),
            ("--ready-interval", "3600"),
            ("--memory-budget", "1024GiB"),
            ("--memory-budget", "16MiB"),
            ("--highlight-deadline", "60s"),
            ("--highlight-deadline", "1ms"),
        ] {
            let r = p(&["ai", "mcp", "serve", "--http", "127.0.0.1:0", flag, value]);
            assert!(r.is_ok(), "{flag} {value}: {r:?}");
        }
    }

    #[test]
    fn the_rate_store_is_kept_as_a_secret_and_replicas_are_1_to_1024() {
        let args = ["ai", "mcp", "serve", "--rate-store", "redis://:pw@h:6379", "--replicas", "3"];
        let Command::Serve(o) = p(&args).unwrap() else { panic!() };
        assert_eq!(o.connection.rate_store.as_ref().map(crate::config::Secret::expose), Some("redis://:pw@h:6379"));
        assert_eq!(o.connection.replicas, Some(3));
        assert!(!format!("{o:?}").contains("pw@"));
        for bad in ["0", "1025", "x"] {
            assert!(p(&["ai", "mcp", "serve", "--replicas", bad]).unwrap_err().contains("1 to 1024"), "{bad}");
        }
    }

    #[test]
    fn the_memory_budget_is_a_size_of_at_least_16_mib() {
        for (given, bytes) in [("1GiB", 1 << 30), ("300M", 300 << 20), ("20971520", 20 << 20)] {
            let Command::Serve(o) = p(&["ai", "mcp", "serve", "--memory-budget", given]).unwrap() else { panic!() };
            assert_eq!(o.memory_budget, Some(bytes), "{given}");
        }
        for bad in ["1MiB", "lots", "-5MiB", "99999999999999GiB"] {
            assert!(
                p(&["ai", "mcp", "serve", "--memory-budget", bad]).unwrap_err().contains("at least 16MiB"),
                "{bad}"
            );
        }
    }

    #[test]
    fn scope_comes_from_the_flags_else_bb_scope_and_a_malformed_entry_stops_bb() {
        let serve = |args: &[&str]| match parse(args.iter().map(OsString::from)).unwrap() {
            Command::Serve(o) => o.scope,
            _ => panic!("not serve"),
        };
        let flags = serve(&["ai", "mcp", "serve", "--project", "OPS", "--repo", "WEB/site", "--repo", "BB/api"]);
        assert_eq!(flags, ["OPS", "WEB/site", "BB/api"]);
        let none = |_: &str| None;
        let scope = scope_from_env(&flags, &none).unwrap().unwrap();
        assert_eq!(scope.words(), "project OPS, WEB/site, BB/api");
        assert_eq!(scope_from_env(&[], &none), Ok(None));
        let env = |name: &str| (name == "BB_SCOPE").then(|| " OPS, BB/api ,".to_owned());
        let scope = scope_from_env(&[], &env).unwrap().unwrap();
        assert_eq!((scope.projects.len(), scope.repositories.len()), (1, 1));
        // The flags win over the environment.
        assert_eq!(scope_from_env(&["WEB".into()], &env).unwrap().unwrap().words(), "project WEB");
        for bad in [&["--project", "BB/api"][..], &["--repo", "BB"], &["--repo", "BB/"], &["--project", "a b"]] {
            let args = ["ai", "mcp", "serve"].iter().chain(bad).map(OsString::from);
            let err = parse(args).unwrap_err();
            assert!(err.contains('`'), "{err}");
        }
        let bad = |name: &str| (name == "BB_SCOPE").then(|| "OPS,BB/api/x".to_owned());
        assert!(scope_from_env(&[], &bad).unwrap_err().starts_with("BB_SCOPE: The scope entry `BB/api/x`"));
        assert!(parse(["ai", "mcp", "tools", "--project", "OPS"].map(OsString::from)).is_err());
    }

    #[test]
    fn confirm_is_on_unless_the_flag_or_bb_confirm_says_off() {
        let serve = |args: &[&str]| match parse(args.iter().map(OsString::from)).unwrap() {
            Command::Serve(o) => o.confirm,
            other => panic!("{other:?}"),
        };
        assert_eq!(serve(&["ai", "mcp", "serve"]), None);
        assert_eq!(serve(&["ai", "mcp", "serve", "--confirm", "off"]), Some(false));
        assert_eq!(serve(&["ai", "mcp", "serve", "--confirm", "ON"]), Some(true));
        assert!(parse(["ai", "mcp", "serve", "--confirm", "maybe"].map(OsString::from)).is_err());
        let none = |_: &str| None;
        assert_eq!(confirm_from_env(None, &none), Ok(true));
        for (text, on) in [("off", false), ("false", false), ("0", false), ("on", true), ("true", true), ("1", true)] {
            let env = |k: &str| (k == "BB_CONFIRM").then(|| text.to_owned());
            assert_eq!(confirm_from_env(None, &env), Ok(on), "{text}");
            assert_eq!(confirm_from_env(Some(true), &env), Ok(true), "the flag wins");
        }
        let bad = |k: &str| (k == "BB_CONFIRM").then(|| "perhaps".to_owned());
        assert!(confirm_from_env(None, &bad).unwrap_err().contains("BB_CONFIRM `perhaps` is not on or off"));
    }

    #[test]
    fn the_audit_flags_take_a_target_and_a_policy_and_belong_to_serve() {
        let serve = |args: &[&str]| match parse(args.iter().map(OsString::from)).unwrap() {
            Command::Serve(o) => (o.audit_file, o.audit_warn),
            other => panic!("{other:?}"),
        };
        assert_eq!(serve(&["ai", "mcp", "serve"]), (None, false));
        let args = ["ai", "mcp", "serve", "--audit-file", "/var/log/bb.jsonl", "--audit-failure", "warn"];
        assert_eq!(serve(&args), (Some("/var/log/bb.jsonl".into()), true));
        assert!(parse(["ai", "mcp", "serve", "--audit-failure", "maybe"].map(OsString::from)).is_err());
        assert!(parse(["ai", "mcp", "tools", "--audit-file", "x"].map(OsString::from)).is_err());
    }
}
