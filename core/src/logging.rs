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

/// Epoch milliseconds as RFC 3339 in UTC with milliseconds, such as `2026-12-04T04:44:00.123Z`: the time of a JSON
/// log line (the shell reads the clock; the calendar is [`crate::text`]'s, shared with the tools' dates).
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = crate::text::civil(i64::try_from(secs / 86_400).unwrap_or(0));
    let rest = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rest / 3600, rest % 3600 / 60, rest % 60, ms % 1000)
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

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(super::rfc3339(1_796_358_240_500), "2026-12-04T04:24:00.500Z");
    }
}
