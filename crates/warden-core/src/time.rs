//! Stored times as evidence for later decisions.
//!
//! The core reads time only from each request's `now_ms`, and every record it
//! stores carries the `now_ms` of the request that wrote it. A single request
//! stamped far ahead (a host whose clock is wrong, or one that passes
//! microseconds for milliseconds) would otherwise leave records that look
//! fresh until that far time: a reply pin that never expires, a last send that
//! keeps asking `gate.min-gap`, a run answer reused for as long.
//!
//! So a stored time later than the request's `now_ms` by more than
//! [`MAX_FUTURE_SKEW_MS`] is not evidence: a pin counts as expired, a last
//! send as absent (and the next send replaces it), a run answer and a budget
//! bucket as gone, a diagnostics time as unseen. A stored time ahead by at most
//! that much (two hosts whose clocks differ a little) counts as `now_ms`
//! itself, so a request stamped slightly early cannot slip under a pin or a
//! gap either; hosts refuse request times further than that from their own
//! clocks. No single request can hold state longer than that skew plus the
//! record's own lifetime (pin TTL, `minGapSeconds`, run answer age, budget
//! window).

/// How far after a request's `now_ms` a stored time may lie and still count,
/// as `now_ms` itself, in milliseconds (5 minutes).
pub const MAX_FUTURE_SKEW_MS: u64 = 5 * 60 * 1000;

/// Whether a time stored at `at_ms` may decide a request at `now_ms`: it is
/// not later than `now_ms` by more than [`MAX_FUTURE_SKEW_MS`].
pub fn credible(at_ms: u64, now_ms: u64) -> bool {
    at_ms <= now_ms.saturating_add(MAX_FUTURE_SKEW_MS)
}

/// The age at `now_ms` of a time stored at `at_ms`: 0 when it lies ahead
/// within the skew, `None` when it lies further ahead and is not evidence.
pub fn age(at_ms: u64, now_ms: u64) -> Option<u64> {
    credible(at_ms, now_ms).then(|| now_ms.saturating_sub(at_ms))
}

#[cfg(test)]
mod tests;
