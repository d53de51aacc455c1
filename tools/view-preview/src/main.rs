//! `cargo run -p view-preview [-- --port N]`: see bb's views in a browser.
#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let options = match view_preview::args::parse(std::env::args_os().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            let _ = std::io::stdout().write_all(view_preview::args::HELP.as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(message) => return fail(&message),
    };
    let preview = match view_preview::start(&options, &|name| std::env::var(name).ok()) {
        Ok(preview) => preview,
        Err(message) => return fail(&message),
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", preview.page_url());
        let _ = out.flush();
    }
    let source = match preview.source() {
        view_preview::Source::Stack(url) => {
            format!("the stack at {url} (token {})", preview.stack_token().unwrap_or(""))
        }
        view_preview::Source::Configured(url) => url.clone(),
    };
    let _ = writeln!(std::io::stderr(), "view-preview: bb at {} reading {source}", preview.mcp_url());
    let _ = writeln!(
        std::io::stderr(),
        "view-preview: open {}?show=BB/api/1 to show a pull request at once",
        preview.page_url()
    );
    preview.wait();
    ExitCode::SUCCESS
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "view-preview: {message}");
    ExitCode::from(2)
}
