//! Recipient-local time from a fixed UTC offset: pure arithmetic on the
//! request's `now_ms`, no time-zone database. Daylight saving is the operator's
//! to follow by updating a recipient's offset; a fixed offset never guesses.

use crate::prelude::*;

/// Westernmost offset in use, in minutes (`-12:00`).
pub const MIN_OFFSET_MINUTES: i32 = -12 * 60;
/// Easternmost offset in use, in minutes (`+14:00`).
pub const MAX_OFFSET_MINUTES: i32 = 14 * 60;
/// Minutes in a day; an `end` of `24:00` means midnight at the end of the day.
pub const MINUTES_PER_DAY: u32 = 24 * 60;

fn two_digits(s: &str) -> Option<u32> {
    if s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()) { s.parse().ok() } else { None }
}

/// Parses `+HH:MM` or `-HH:MM` into minutes east of UTC, within `-12:00..=+14:00`.
pub fn parse_offset(text: &str) -> Option<i32> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = text.get(1..)?.split_once(':')?;
    let (h, m) = (two_digits(h)?, two_digits(m)?);
    if m >= 60 {
        return None;
    }
    let minutes = sign * i32::try_from(h * 60 + m).ok()?;
    (MIN_OFFSET_MINUTES..=MAX_OFFSET_MINUTES).contains(&minutes).then_some(minutes)
}

/// Parses `HH:MM` (00:00 to 23:59) into minutes after midnight; `24:00` only if `allow_end_of_day`.
pub fn parse_clock(text: &str, allow_end_of_day: bool) -> Option<u32> {
    let (h, m) = text.split_once(':')?;
    let (h, m) = (two_digits(h)?, two_digits(m)?);
    match (h, m) {
        (24, 0) if allow_end_of_day => Some(MINUTES_PER_DAY),
        (0..=23, 0..=59) => Some(h * 60 + m),
        _ => None,
    }
}

/// The minute of the local day at `now_ms` for a place `offset` minutes east of UTC.
pub fn local_minute(now_ms: u64, offset: i32) -> u32 {
    let minutes = i64::try_from(now_ms / 60_000).unwrap_or(i64::MAX) + i64::from(offset);
    u32::try_from(minutes.rem_euclid(i64::from(MINUTES_PER_DAY))).unwrap_or(0)
}

/// Whether `minute` lies in the window from `start` (inclusive) to `end`
/// (exclusive); a window whose end is before its start wraps past midnight.
pub fn within(start: u32, end: u32, minute: u32) -> bool {
    if start < end { start <= minute && minute < end } else { minute >= start || minute < end }
}

/// `HH:MM` of a minute of the day.
pub fn show(minute: u32) -> String {
    format!("{:02}:{:02}", minute / 60, minute % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_parse_within_the_range_in_use() {
        let cases = [
            ("+00:00", Some(0)),
            ("-00:00", Some(0)),
            ("+05:30", Some(330)),
            ("+05:45", Some(345)),
            ("-09:30", Some(-570)),
            ("+14:00", Some(840)),
            ("-12:00", Some(-720)),
            ("+14:01", None),
            ("-12:01", None),
            ("+15:00", None),
            ("+5:30", None),
            ("05:30", None),
            ("+05:60", None),
            ("+05.30", None),
            ("+0530", None),
            ("", None),
            ("+", None),
            ("+٠٥:٣٠", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_offset(text), expected, "{text}");
        }
    }

    #[test]
    fn clock_times_parse_and_only_an_end_may_be_midnight_at_the_end_of_the_day() {
        assert_eq!(parse_clock("00:00", false), Some(0));
        assert_eq!(parse_clock("23:59", false), Some(1439));
        assert_eq!(parse_clock("24:00", false), None);
        assert_eq!(parse_clock("24:00", true), Some(1440));
        assert_eq!(parse_clock("24:01", true), None);
        assert_eq!(parse_clock("8:00", false), None);
        assert_eq!(parse_clock("08:60", false), None);
    }

    #[test]
    fn local_minutes_wrap_around_the_day_in_both_directions() {
        let midnight = 1_717_372_800_000; // 2024-06-03T00:00:00Z
        assert_eq!(local_minute(midnight, 0), 0);
        assert_eq!(local_minute(midnight, -720), 720);
        assert_eq!(local_minute(midnight, 840), 840);
        assert_eq!(local_minute(midnight - 1, 0), 1439);
        assert_eq!(local_minute(midnight + 59_999, 0), 0);
        assert_eq!(local_minute(0, -60), 1380, "before the epoch in local time");
        assert!(local_minute(u64::MAX, 840) < MINUTES_PER_DAY);
    }
}
