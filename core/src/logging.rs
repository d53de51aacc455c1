//! Log levels, as MCP names them (RFC 5424 severities), shared by the client's `logging/setLevel`
//! and the operator's `--log-level`.

/// A log severity, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Detail for a developer.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something went wrong that bb handled.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Action needed now.
    Alert,
    /// bb cannot go on.
    Emergency,
}

impl Level {
    /// Every level, least severe first.
    pub const ALL: [Level; 8] = [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ];

    /// The level's MCP name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }

    /// The level with this MCP name (`warn` is accepted for `warning`, as operators type it).
    pub fn parse(s: &str) -> Option<Level> {
        if s.eq_ignore_ascii_case("warn") {
            return Some(Level::Warning);
        }
        Level::ALL.into_iter().find(|l| l.as_str().eq_ignore_ascii_case(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_parses_back_from_its_name() {
        for l in Level::ALL {
            assert_eq!(Level::parse(l.as_str()), Some(l));
        }
        assert_eq!(Level::parse("WARN"), Some(Level::Warning));
        assert_eq!(Level::parse("verbose"), None);
    }

    #[test]
    fn levels_order_by_severity() {
        assert!(Level::Debug < Level::Warning && Level::Warning < Level::Emergency);
    }
}
