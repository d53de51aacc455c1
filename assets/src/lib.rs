//! bb-assets: the one view page, `ui://bb/view`, embedded in the binary.
//!
//! The page is static: it holds no Bitbucket data, fetches nothing, declares no network domains
//! and is byte-identical for every user and call. What a view draws arrives in a tool result's
//! `_meta["bb/view"]` (see `VIEW_DATA.md`) through the MCP Apps host bridge. The page's script
//! builds every element with `el()` and never parses a string as HTML. Its small scripts are
//! concatenated here, in order: each may use what the ones before it define.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The complete HTML document served as `ui://bb/view` (`text/html;profile=mcp-app`).
pub const VIEW_HTML: &str = concat!(
    include_str!("../view/head.html"),
    "<style>\n",
    include_str!("../view/view.css"),
    "</style>\n</head>\n<body>\n<main id=\"view\"></main>\n<script>\n",
    include_str!("../view/el.js"),
    include_str!("../view/bridge.js"),
    include_str!("../view/theme.js"),
    include_str!("../view/format.js"),
    include_str!("../view/links.js"),
    include_str!("../view/grow.js"),
    include_str!("../view/people.js"),
    include_str!("../view/markdown.js"),
    include_str!("../view/card.js"),
    include_str!("../view/list.js"),
    include_str!("../view/main.js"),
    "</script>\n</body>\n</html>\n",
);

/// The page's scripts, by file name, in the order the page runs them, for tests that inspect them.
pub const SCRIPTS: &[(&str, &str)] = &[
    ("el.js", include_str!("../view/el.js")),
    ("bridge.js", include_str!("../view/bridge.js")),
    ("theme.js", include_str!("../view/theme.js")),
    ("format.js", include_str!("../view/format.js")),
    ("links.js", include_str!("../view/links.js")),
    ("grow.js", include_str!("../view/grow.js")),
    ("people.js", include_str!("../view/people.js")),
    ("markdown.js", include_str!("../view/markdown.js")),
    ("card.js", include_str!("../view/card.js")),
    ("list.js", include_str!("../view/list.js")),
    ("main.js", include_str!("../view/main.js")),
];
