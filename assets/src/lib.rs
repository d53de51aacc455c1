//! bb-assets: the one view page, `ui://bb/view`, embedded in the binary.
//!
//! The page is static: it holds no Bitbucket data, fetches nothing, declares no network domains
//! and is byte-identical for every user and call. What a view draws arrives in a tool result's
//! `_meta` through the MCP Apps host bridge. The page's script builds every element with `el()`
//! and never parses a string as HTML.
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
    include_str!("../view/main.js"),
    "</script>\n</body>\n</html>\n",
);

/// The page's scripts, by file name, for tests that inspect them.
pub const SCRIPTS: &[(&str, &str)] = &[
    ("el.js", include_str!("../view/el.js")),
    ("bridge.js", include_str!("../view/bridge.js")),
    ("main.js", include_str!("../view/main.js")),
];
