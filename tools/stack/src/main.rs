//! `bb-stack --port 0 [--data FILE] [--token T] [--context-path /bitbucket] [--tls] [--require-client-cert]
//! [--client-ca FILE] [--no-search]`: serves a local Bitbucket Data Center stand-in. Prints its base URL on the first line and the
//! default user's personal access token on the second, then serves until killed.
//!
//! `--tls` serves HTTPS with the committed test certificate (`certs/server.pem`; clients trust `certs/ca.pem`).
//! `--require-client-cert` also requires a client certificate signed by the test CA (`certs/client.pem`);
//! `--client-ca FILE` requires one signed by the CA in FILE instead (both imply `--tls`). `--no-search` answers code
//! search as a server without a search index does (`/_stack/search` switches it).
//!
//! `STACK_LATENCY_MS=100` in the environment adds 100 ms to every Bitbucket answer from the start, as `/_stack/latency`
//! with path prefix `/` does, and a reset keeps it (see `control`).

use std::io::Write;

const USAGE: &str = "usage: bb-stack [--port N] [--data FILE] [--token TOKEN] [--context-path /PATH] [--tls] \
[--require-client-cert] [--client-ca FILE] [--no-search]";

fn main() {
    match run() {
        Ok(()) => {}
        Err(e) => {
            eprintln!("bb-stack: {e}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<(), String> {
    use lexopt::prelude::*;
    let mut config = bb_stack::StackConfig::default();
    if let Some(ms) = std::env::var_os("STACK_LATENCY_MS") {
        let ms = ms.to_string_lossy();
        config.latency_ms = ms
            .trim()
            .parse()
            .map_err(|_| format!("STACK_LATENCY_MS must be a whole number of milliseconds, not {ms:?}"))?;
    }
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("port") | Short('p') => {
                config.port = parser.value().map_err(|e| e.to_string())?.parse().map_err(|e| format!("--port: {e}"))?
            }
            Long("data") => {
                let path = parser.value().map_err(|e| e.to_string())?;
                let text =
                    std::fs::read_to_string(&path).map_err(|e| format!("--data {}: {e}", path.to_string_lossy()))?;
                config.seed = Some(text);
            }
            Long("token") => {
                config.token = Some(parser.value().map_err(|e| e.to_string())?.string().map_err(|e| e.to_string())?)
            }
            Long("context-path") => {
                config.context_path = parser.value().map_err(|e| e.to_string())?.string().map_err(|e| e.to_string())?
            }
            Long("tls") => {
                config.tls.get_or_insert_with(bb_stack::tls::StackTls::test);
            }
            Long("require-client-cert") => {
                let tls = config.tls.get_or_insert_with(bb_stack::tls::StackTls::test);
                tls.client_ca_pem.get_or_insert_with(|| bb_stack::tls::TEST_CA_PEM.to_string());
            }
            Long("client-ca") => {
                let path = parser.value().map_err(|e| e.to_string())?;
                let pem = std::fs::read_to_string(&path)
                    .map_err(|e| format!("--client-ca {}: {e}", path.to_string_lossy()))?;
                config.tls.get_or_insert_with(bb_stack::tls::StackTls::test).client_ca_pem = Some(pem);
            }
            Long("no-search") => config.no_search = true,
            Long("help") | Short('h') => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("{}\n{USAGE}", arg.unexpected())),
        }
    }
    let stack = bb_stack::Stack::start(config)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", stack.base_url).map_err(|e| e.to_string())?;
    writeln!(out, "{}", stack.token).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    drop(out);
    stack.wait();
    Ok(())
}
