//! The bookkeeping that keeps a scan linear in the text on bodies built to
//! repeat one form: each answers as its plain, quadratic reading does.

use super::*;
use proptest::prelude::*;

#[test]
fn a_range_overlaps_a_span_found_before_or_a_labelled_value_exactly_when_it_overlaps_one_of_them() {
    let before = [Span { detector: "a", start: 10, end: 20 }, Span { detector: "b", start: 0, end: 40 }];
    let mut taken = Taken::of(&before);
    let mut spans = Vec::new();
    assert!(taken.overlaps(39, 50), "inside the long span found before");
    assert!(!taken.overlaps(40, 50), "the long span ends where the range starts");
    taken.push(&mut spans, "x", 45, 50);
    taken.push(&mut spans, "x", 48, 60);
    let pushed: Vec<(usize, usize)> = spans.iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(pushed, [(45, 50)], "an overlapping value is not added");
    assert!(taken.overlaps(49, 50));
    assert!(!taken.overlaps(50, 70));
}

#[test]
fn a_line_starts_after_the_last_line_end_before_a_position_asked_in_any_order() {
    let text = b"ab\ncd|1|x|tok\n\nz tok";
    let plain = |at: usize| text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut lines = LineStarts::default();
    let ascending: Vec<usize> = (0..=text.len()).collect();
    let positions = ascending.iter().chain([20, 3, 0, 14, 15, 2].iter()).chain(ascending.iter());
    for &at in positions {
        assert_eq!(lines.of(text, at), plain(at), "{at}");
    }
}

/// Whether a body varies like a random token, counted on its own: two
/// classes of upper, lower and digit, and eight distinct bytes.
fn varies_counted_alone(body: &[u8]) -> bool {
    let classes = [u8::is_ascii_uppercase, u8::is_ascii_lowercase, u8::is_ascii_digit]
        .iter()
        .filter(|class| body.iter().any(class))
        .count();
    let mut seen = [false; 256];
    let distinct = body.iter().filter(|&&b| !core::mem::replace(&mut seen[usize::from(b)], true)).count();
    classes >= 2 && distinct >= 8
}

#[test]
fn bodies_vary_like_random_tokens_with_two_classes_and_eight_distinct_bytes() {
    let cases: &[(&[u8], bool)] =
        &[(b"aB3cD4eF", true), (b"abcdefgh", false), (b"aB1aB1aB1aB1", false), (b"aB3cD4e", false), (b"", false)];
    for &(body, expected) in cases {
        assert_eq!(super::super::vendors::random_body(body), expected, "{}", String::from_utf8_lossy(body));
        assert_eq!(varies_counted_alone(body), expected, "{}", String::from_utf8_lossy(body));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn taken_answers_as_comparing_with_every_span(
        before in proptest::collection::vec((0usize..200, 1usize..30), 0..12),
        pushes in proptest::collection::vec((0usize..220, 1usize..30), 0..24),
        queries in proptest::collection::vec((0usize..250, 0usize..30), 1..24),
    ) {
        let mut spans: Vec<Span> =
            before.iter().map(|&(start, len)| Span { detector: "x", start, end: start + len }).collect();
        let mut taken = Taken::of(&spans);
        let every = |spans: &[Span], start: usize, end: usize| spans.iter().any(|s| s.start < end && start < s.end);
        for &(start, len) in &pushes {
            let end = start + len;
            let expected = !every(&spans, start, end);
            let count = spans.len();
            taken.push(&mut spans, "x", start, end);
            prop_assert_eq!(spans.len() == count + 1, expected, "push {}..{}", start, end);
        }
        for &(start, len) in &queries {
            let end = start + len;
            prop_assert_eq!(taken.overlaps(start, end), every(&spans, start, end), "{}..{}", start, end);
        }
    }

    #[test]
    fn line_starts_asked_in_order_are_those_found_by_searching_back(
        text in proptest::collection::vec(proptest::sample::select(b"ab \n|1".to_vec()), 0..300),
        mut positions in proptest::collection::vec(0usize..300, 0..40),
    ) {
        positions.sort_unstable();
        let mut lines = LineStarts::default();
        for at in positions.into_iter().filter(|&at| at <= text.len()) {
            let plain = text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            prop_assert_eq!(lines.of(&text, at), plain, "{}", at);
        }
    }

    #[test]
    fn a_forward_moving_window_judges_each_body_as_judging_it_alone(
        text in proptest::collection::vec(proptest::sample::select(b"aAbB01._-xyzXYZ789".to_vec()), 0..400),
        windows in proptest::collection::vec((0usize..420, 0usize..120), 1..40),
    ) {
        let mut windows: Vec<(usize, usize)> = windows.into_iter().map(|(from, len)| (from, from + len)).collect();
        // The order the vendor rows ask in (ascending starts), then any order.
        let mut ascending = windows.clone();
        ascending.sort_unstable();
        windows.extend(ascending);
        let mut variety = super::super::vendors::Variety::default();
        for (from, to) in windows {
            let alone = text.get(from..to.min(text.len())).is_some_and(varies_counted_alone);
            let judged = from <= text.len() && variety.random(&text, from, to);
            prop_assert_eq!(judged, alone, "{}..{}", from, to);
        }
    }
}
