//! The command line: `bb ai mcp serve`, `bb ai mcp tools`, `bb --version`, `bb --help`.
//!
//! Parsed with lexopt. Every mistake is an error that says what was wrong and where to look.

use std::collections::BTreeSet;
use std::ffi::OsString;

use bb_core::{ExposureOptions, Level};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print the help of a command (`bb --help`, `bb ai mcp serve --help`, …).
    Help(&'static str),
    /// Print the version.
    Version,
    /// Serve MCP over stdio.
    Serve(ServeOptions),
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
}

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
bb stops when stdin closes.

Usage: bb ai mcp serve [OPTIONS]

Options:
  --tools A,B         expose only these tools (show's view companions come with show)
  --exclude A,B       never expose these tools (wins over --tools)
  --allow-writes      also expose tools that cannot be undone (merge_pull_request)
  --log-level LEVEL   log to stderr at LEVEL and above: debug, info, notice, warning,
                      error, critical, alert, emergency, or off (default: warning)
  -h, --help          print this help
";

/// Help of `bb ai mcp tools`.
pub const TOOLS_HELP: &str = "\
Print the tools `bb ai mcp serve` would expose with the same options, one line each.

Usage: bb ai mcp tools [--tools A,B] [--exclude A,B] [--allow-writes]
";

/// Parses the command line (without the program name).
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Command, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_iter(std::iter::once(OsString::from("bb")).chain(args));
    let mut words: Vec<String> = Vec::new();
    let mut exposure = ExposureOptions::default();
    let mut log_level = Some(Level::Warning);
    let mut help = false;
    let mut seen_options: Vec<&'static str> = Vec::new();
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
        ["ai", "mcp", "serve"] => Ok(Command::Serve(ServeOptions { exposure, log_level })),
        ["ai", "mcp", "tools"] => {
            if let Some(flag) = seen_options.iter().find(|f| **f == "--log-level") {
                return Err(format!("{flag} is not an option of `bb ai mcp tools`; see `bb ai mcp tools --help`"));
            }
            Ok(Command::Tools(exposure))
        }
        _ => Err(format!("`bb {}` is not a command; see `bb --help`", words.join(" "))),
    }
}

fn split_names(list: OsString, flag: &str) -> Result<Vec<String>, String> {
    let list = list.into_string().map_err(|_| format!("{flag} takes tool names in plain text"))?;
    let names: Vec<String> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if names.is_empty() {
        return Err(format!("{flag} needs at least one tool name, such as {flag} get_pull_request"));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(OsString::from))
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
    fn tools_refuses_serve_only_flags() {
        assert!(
            p(&["ai", "mcp", "tools", "--log-level", "info"])
                .unwrap_err()
                .contains("not an option of `bb ai mcp tools`")
        );
    }
}
