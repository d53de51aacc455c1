//! bb-assets: the one view page, `ui://bb/view`, embedded in the binary.
//!
//! The page is static: it holds no Bitbucket data, fetches nothing, declares no network domains
//! and is byte-identical for every user and call. What a view draws arrives in a tool result's
//! `_meta["bb/view"]` (see `VIEW_DATA.md`) through the MCP Apps host bridge. The page's script
//! builds every element with `el()` and never parses a string as HTML. Its small scripts are
//! concatenated here, in order: each may use what the ones before it define. `kinds.js` holds the
//! registry that each view module (`card.js`, `list.js`, one per kind of `bb_core::views::KINDS`)
//! adds its kind to, and `main.js` draws from it.
//!
//! The page goes out slimmed, at compile time and without a build step ([`slim`], the crate's one
//! module): each line's leading blanks and every line that is only a `//` comment are left out, so the
//! sources keep their comments and the page its weight bound. The repository's map is
//! `docs/ARCHITECTURE.md`; the page's data contract is `assets/VIEW_DATA.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Lists the page's scripts once; both the page and the table of scripts are made from that list
/// at compile time.
macro_rules! page {
    ($($script:literal),+ $(,)?) => {
        /// The page as written, before [`slim`].
        const WRITTEN: &str = concat!(
            include_str!("../view/head.html"),
            "<style>\n",
            include_str!("../view/view.css"),
            include_str!("../view/diff.css"),
            include_str!("../view/file.css"),
            include_str!("../view/form.css"),
            include_str!("../view/threads.css"),
            "</style>\n</head>\n<body>\n<main id=\"view\"></main>\n<script>\n",
            $(include_str!(concat!("../view/", $script)),)+
            "</script>\n</body>\n</html>\n",
        );
        const SLIM: [u8; slim::len(WRITTEN)] = slim::bytes(WRITTEN);
        /// The complete HTML document served as `ui://bb/view` (`text/html;profile=mcp-app`).
        pub const VIEW_HTML: &str = match core::str::from_utf8(&SLIM) {
            Ok(html) => html,
            Err(_) => panic!("slimming cut a character"),
        };

        /// The page's scripts, by file name, in the order the page runs them, for tests that inspect them.
        pub const SCRIPTS: &[(&str, &str)] = &[$(($script, include_str!(concat!("../view/", $script)))),+];
    };
}

pub mod slim;

page![
    "el.js",
    "bridge.js",
    "theme.js",
    "format.js",
    "links.js",
    "grow.js",
    "people.js",
    "markdown.js",
    "code.js",
    "picture.js",
    "kinds.js",
    "context.js",
    "changes.js",
    "point.js",
    "save.js",
    "refresh.js",
    "commits.js",
    "navigate.js",
    "actions.js",
    "review.js",
    "insights.js",
    "card.js",
    "threads.js",
    "list.js",
    "expand.js",
    "diff.js",
    "compare.js",
    "file.js",
    "form.js",
    "main.js",
];
