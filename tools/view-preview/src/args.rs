//! The command line: `view-preview [--port N]`.

use std::ffi::OsString;

/// The port the page is served on when none is given.
pub const DEFAULT_PORT: u16 = 8765;

/// Help text.
pub const HELP: &str = "\
Preview bb's views in a browser: a minimal MCP Apps host over bb and a Bitbucket.

Usage: cargo run -p view-preview [-- --port N]

Starts the local stack (or uses BITBUCKET_URL with BITBUCKET_TOKEN, as bb does), runs bb's
Streamable HTTP transport on a free loopback port, and serves the host page on 127.0.0.1:N.
The page's URL is the first line on stdout. Open it, pick a pull request or a list, and switch
theme and display mode. Query parameters open a view at once: show=BB/api/1 (a pull request),
show=BB/cli (a list; add state=MERGED), show=inbox; theme=dark, mode=fullscreen, vars=0 (no
style variables from the host). When bb asks the person first (a merge, a write that cannot be
undone) the page shows bb's question as a form; confirm=accept (tick and accept), confirm=decline
or confirm=cancel answers it at once.

Options:
  --port N     the page's port on 127.0.0.1 (default: 8765; 0: any free port)
  -h, --help   print this help
";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The page's port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
}

impl Default for Options {
    fn default() -> Options {
        Options { port: DEFAULT_PORT }
    }
}

/// Parses the arguments (without the program name): `Ok(None)` asks for the help.
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Option<Options>, String> {
    use lexopt::prelude::*;
    let mut options = Options::default();
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("port") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                let text = value.to_string_lossy();
                options.port =
                    text.parse().map_err(|_| format!("--port `{text}` is not a port number (0 to 65535)"))?;
            }
            Short('h') | Long("help") => return Ok(None),
            other => return Err(format!("{} (see --help)", other.unexpected())),
        }
    }
    Ok(Some(options))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Option<Options>, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn the_port_defaults_to_8765_and_can_be_chosen() {
        assert_eq!(parse_strs(&[]).unwrap(), Some(Options { port: 8765 }));
        assert_eq!(parse_strs(&["--port", "0"]).unwrap(), Some(Options { port: 0 }));
        assert_eq!(parse_strs(&["--port=9000"]).unwrap(), Some(Options { port: 9000 }));
    }

    #[test]
    fn help_and_mistakes_are_told_apart() {
        assert_eq!(parse_strs(&["--help"]).unwrap(), None);
        assert!(parse_strs(&["--port", "x"]).unwrap_err().contains("not a port"));
        assert!(parse_strs(&["--nope"]).is_err());
    }
}
