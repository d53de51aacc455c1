//! What the fuzz targets (`fuzz/`) reach of the core's private modules, built only with `--cfg
//! fuzzing` (as `cargo fuzz` builds): every decoder bb reads Bitbucket with, the Markdown tree, the
//! ref matchers and the highlighter, under the modules' own names. Nothing here is part of the
//! contract the shells use.

/// Bitbucket's JSON and the sentences its failures become.
pub mod bitbucket {
    pub use crate::bitbucket::RawPage;

    /// How much of a diff a decode keeps.
    pub mod budget {
        pub use crate::bitbucket::budget::Share;
    }

    /// How much of a file's window a decode keeps.
    pub mod window {
        pub use crate::bitbucket::window::LineShare;
    }

    /// How a Bitbucket answer becomes its body or one sentence.
    pub mod errors {
        pub use crate::errors::{BitbucketError, Subject, Write, body, json};
    }

    /// Bitbucket's JSON, as bb reads it.
    pub mod model {
        pub use crate::bitbucket::model::{Activity, MergeCheck, PullRequest};
    }
}

/// The reads whose decoders the decode target feeds.
pub mod reads {
    /// Avatars as `data:` URLs.
    pub mod avatars {
        pub use crate::reads::avatars::from_outcome;
    }

    /// A pull request's builds.
    pub mod builds {
        pub use crate::reads::builds::{BuildsRead, BuildsReader, Fallback};
    }

    /// The required-builds conditions and the branching model.
    pub mod conditions {
        pub use crate::reads::conditions::{ConditionsRead, ConditionsReader};
    }

    /// The changed files and one file's diff.
    pub mod diff {
        pub use crate::reads::diff::{changes, file, file_within};
    }

    /// A window of a file's lines, a folder.
    pub mod files {
        pub use crate::reads::files::{Browsed, Place, browsed_within};
    }
}

/// The glob matcher behind `list_files` and the branch patterns.
pub mod glob {
    pub use crate::glob::Glob;
}

/// Which refs a condition matches.
pub mod requirements {
    pub use crate::requirements::{RefMatcher, branch_model_from_json, condition_from_json, matches, pattern_matches};
}

/// Markdown as the view page's node tree.
pub mod markdown {
    pub use crate::markdown::to_tree;
}

/// Highlighting.
pub mod highlight {
    pub use crate::highlight::{Language, SideHighlighter};
}
