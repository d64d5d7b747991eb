//! Request times a host accepts.
//!
//! The component reads time only from the `nowMs` of each request, and stores
//! it with what the request records, so a request stamped far from the real
//! time would leave a reply pin, a thread or a ledger line dated there. Every
//! request time that comes from outside the host (`nowMs` in JSON, `--now-ms`
//! on the command line) must therefore lie within [`CLOCK_TOLERANCE_MS`] of the
//! host's own clock, in either direction: a time too far ahead would date
//! records into the future, one too far back would judge against records as
//! if they had not been made yet. A request that omits it gets the host's
//! clock. `--replay` turns the check off, for replaying recorded requests on
//! purpose; the component still ignores stored times dated more than its own
//! skew after a request (see the README's "Request times").

/// How far a request time may be from the host's clock, either way, in
/// milliseconds (5 minutes, the same as the component's skew for stored times).
pub const CLOCK_TOLERANCE_MS: u64 = 5 * 60 * 1000;

/// The host's clock, in milliseconds since the Unix epoch.
pub fn system_now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Which request times a host accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    /// Accept any request time (`--replay`).
    pub replay: bool,
}

impl Clock {
    /// Request times must be near the host's clock.
    pub const LIVE: Clock = Clock { replay: false };
    /// Any request time is accepted.
    pub const REPLAY: Clock = Clock { replay: true };

    /// Checks the request time `value` of `field`; `None` (the host's clock) always passes.
    pub fn admit(&self, field: &str, value: Option<u64>) -> Result<(), String> {
        match value {
            Some(v) if !self.replay => admit_at(field, v, system_now_ms()),
            _ => Ok(()),
        }
    }
}

/// Checks `value` against the host time `host_ms`.
pub fn admit_at(field: &str, value: u64, host_ms: u64) -> Result<(), String> {
    let near = |v: u64| v.abs_diff(host_ms) <= CLOCK_TOLERANCE_MS;
    if near(value) {
        return Ok(());
    }
    let off = value.abs_diff(host_ms);
    let way = if value > host_ms { "ahead of" } else { "behind" };
    let units = if near(value / 1_000_000) {
        " It looks like nanoseconds: it must be milliseconds since the Unix epoch."
    } else if near(value / 1000) {
        " It looks like microseconds: it must be milliseconds since the Unix epoch."
    } else if near(value.saturating_mul(1000)) {
        " It looks like seconds: it must be milliseconds since the Unix epoch."
    } else {
        ""
    };
    Err(format!(
        "{field}: `{value}` is {} ({off} ms) {way} this host's clock; a request time may differ from it by at most \
         {} ({CLOCK_TOLERANCE_MS} ms).{units} To replay recorded requests with their own times, run warden with \
         `--replay`.",
        span(off),
        span(CLOCK_TOLERANCE_MS),
    ))
}

/// A duration in words, to the largest unit that fits: `3 days`, `2 h 5 min`, `5 minutes`, `7 min 30 s`, `400 ms`.
pub fn span(ms: u64) -> String {
    const S: u64 = 1000;
    const M: u64 = 60 * S;
    const H: u64 = 60 * M;
    const D: u64 = 24 * H;
    let plural = |n: u64, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    match ms {
        ms if ms >= D => plural(ms / D, "day"),
        ms if ms >= H => format!("{} h {} min", ms / H, ms % H / M),
        ms if ms >= M && ms % M == 0 => plural(ms / M, "minute"),
        ms if ms >= M => format!("{} min {} s", ms / M, ms % M / S),
        ms if ms >= S => format!("{} s", ms / S),
        ms => format!("{ms} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: u64 = 1_764_590_400_000; // 2025-12-01T12:00:00Z

    #[test]
    fn request_times_are_admitted_up_to_the_tolerance_either_way_and_not_one_millisecond_more() {
        assert_eq!(CLOCK_TOLERANCE_MS, 300_000);
        for ok in [HOST, HOST + CLOCK_TOLERANCE_MS, HOST - CLOCK_TOLERANCE_MS] {
            assert_eq!(admit_at("nowMs", ok, HOST), Ok(()), "{ok}");
        }
        let ahead = admit_at("nowMs", HOST + CLOCK_TOLERANCE_MS + 1, HOST).err().unwrap_or_default();
        assert_eq!(
            ahead,
            format!(
                "nowMs: `{}` is 5 min 0 s (300001 ms) ahead of this host's clock; a request time may differ from it \
                 by at most 5 minutes (300000 ms). To replay recorded requests with their own times, run warden \
                 with `--replay`.",
                HOST + CLOCK_TOLERANCE_MS + 1
            )
        );
        let behind = admit_at("--now-ms", HOST - CLOCK_TOLERANCE_MS - 1, HOST).err().unwrap_or_default();
        assert!(
            behind
                .starts_with(&format!("--now-ms: `{}` is 5 min 0 s (300001 ms) behind", HOST - CLOCK_TOLERANCE_MS - 1))
        );
    }

    #[test]
    fn a_time_in_other_units_gets_a_hint() {
        let cases = [
            (HOST * 1000, "looks like microseconds"),
            (HOST * 1000 + 999, "looks like microseconds"),
            (HOST * 1_000_000, "looks like nanoseconds"),
            (HOST / 1000, "looks like seconds"),
        ];
        for (value, hint) in cases {
            let e = admit_at("nowMs", value, HOST).err().unwrap_or_default();
            assert!(e.contains(hint), "{value}: {e}");
            assert!(e.contains(&format!("`{value}`")), "{e}");
        }
        let e = admit_at("nowMs", 1_700_000_000_000, HOST).err().unwrap_or_default();
        assert!(e.contains("is 747 days (64590400000 ms) behind this host's clock"), "{e}");
        assert!(!e.contains("looks like"), "{e}");
        assert!(admit_at("nowMs", u64::MAX, HOST).is_err());
        assert!(admit_at("nowMs", 0, HOST).is_err());
    }

    #[test]
    fn replay_admits_any_time_and_an_absent_time_is_the_hosts() {
        assert_eq!(Clock::REPLAY.admit("nowMs", Some(0)), Ok(()));
        assert_eq!(Clock::REPLAY.admit("nowMs", Some(u64::MAX)), Ok(()));
        assert_eq!(Clock::LIVE.admit("nowMs", None), Ok(()));
        assert_eq!(Clock::LIVE.admit("nowMs", Some(system_now_ms())), Ok(()));
        assert!(Clock::LIVE.admit("nowMs", Some(u64::MAX)).is_err());
    }

    #[test]
    fn spans_read_in_the_largest_unit_that_fits() {
        let cases = [
            (0, "0 ms"),
            (999, "999 ms"),
            (1000, "1 s"),
            (59_999, "59 s"),
            (60_000, "1 minute"),
            (300_000, "5 minutes"),
            (300_001, "5 min 0 s"),
            (3_600_000, "1 h 0 min"),
            (86_400_000, "1 day"),
            (2 * 86_400_000 + 1, "2 days"),
        ];
        for (ms, text) in cases {
            assert_eq!(span(ms), text, "{ms}");
        }
    }
}
