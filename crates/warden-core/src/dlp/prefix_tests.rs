use super::*;
use crate::dlp::detectors::{self, long_runs, names, run};
use crate::dlp::tests::checksummed;
use proptest::prelude::*;
use serde_json::Value;

const DATA: &str = include_str!("../../testdata/dlp-strings.json");

/// Every body of the DLP data file.
fn data_bodies() -> Vec<Vec<u8>> {
    let doc: Value = serde_json::from_str(DATA).expect("data file is JSON");
    doc["cases"].as_array().expect("cases").iter().map(|c| crate::dlp::tests::body_of(&c["parts"])).collect()
}

fn detectors_of(text: &str) -> Vec<(&'static str, usize)> {
    detectors::scan(text).into_iter().map(|h| (h.detector, h.offset)).collect()
}

fn github() -> String {
    checksummed("ghp_", "aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2")
}

#[test]
fn the_prefix_automaton_builds() {
    assert!(automaton_builds());
}

#[test]
fn every_pattern_id_names_its_string() {
    let all: Vec<Vec<u8>> = patterns().collect();
    for (i, row) in ROWS.iter().enumerate() {
        assert_eq!(all.get(Prefix::Row(i).id()).map(Vec::as_slice), Some(row.prefix.as_bytes()));
    }
    for (i, f) in Fixed::ALL.iter().enumerate() {
        assert_eq!(*f as usize, i, "{f:?} is listed in declaration order");
        assert_eq!(all.get(Prefix::Fixed(*f).id()).map(Vec::as_slice), Some(f.text().as_bytes()));
    }
    for (i, w) in PLACEHOLDER_WORDS.iter().enumerate() {
        assert_eq!(all.get(first_placeholder_id() + i).map(Vec::as_slice), Some(*w));
    }
    let variants: usize = super::super::labelled::LABEL_PIECES.iter().map(|p| 1usize << p.len()).sum();
    assert_eq!(all.len(), first_piece_id() + variants);
}

#[test]
fn the_one_pass_finds_what_comparing_at_every_position_finds_on_every_data_file_body() {
    for body in data_bodies() {
        assert_eq!(Found::in_text(&body).all(), naive(&body).as_slice(), "{}", String::from_utf8_lossy(&body));
    }
}

#[test]
fn a_string_across_a_border_of_the_parts_of_a_long_text_is_found_once_by_the_walks() {
    // Long texts are walked in parts; every string, placed at every position
    // from wholly before each border to wholly after it.
    for (id, pattern) in patterns().enumerate() {
        for len in [512usize, 777] {
            let borders = (1..WALKS).map(|k| k * (len / WALKS));
            for at in borders.flat_map(|b| b.saturating_sub(pattern.len() + 1)..=b + 1) {
                let mut text = vec![b'q'; len];
                text[at..at + pattern.len()].copy_from_slice(&pattern);
                let found = Found::in_text(&text);
                let here = found.all().iter().filter(|&&hit| hit == (id, at)).count();
                assert_eq!(here, 1, "{} at {at} of {len}", String::from_utf8_lossy(&pattern));
                assert!(found.all().windows(2).all(|w| w[0] != w[1]), "a hit reported twice: {:?}", found.all());
            }
        }
    }
}

#[test]
fn overlapping_prefixes_are_each_found() {
    let text = b"sk-ant-api03-ACCAKIA-us-usSG.xoxb-xoxp-";
    let found = Found::in_text(text);
    assert_eq!(found.all(), naive(text).as_slice());
    assert_eq!(found.starts(Prefix::Fixed(Fixed::OpenAi)).collect::<Vec<_>>(), [0]);
    let anthropic = ROWS.iter().position(|r| r.prefix == "sk-ant-api03-").expect("a row");
    assert_eq!(found.starts(Prefix::Row(anthropic)).collect::<Vec<_>>(), [0]);
    assert_eq!(found.starts(Prefix::Fixed(Fixed::AwsAcca)).collect::<Vec<_>>(), [13]);
    assert_eq!(found.starts(Prefix::Fixed(Fixed::AwsAkia)).collect::<Vec<_>>(), [16]);
    assert_eq!(found.starts(Prefix::Fixed(Fixed::MailchimpRegion)).collect::<Vec<_>>(), [20, 23]);
}

#[test]
fn a_prefix_at_the_very_start_or_end_of_the_text_is_found() {
    for text in [&b"AKIA"[..], b"-----BEGIN ", b"x://", b"eyJ", b"hooks.slack.com/services/"] {
        let found = Found::in_text(text);
        assert_eq!(found.all(), naive(text).as_slice());
        assert!(!found.all().is_empty(), "{}", String::from_utf8_lossy(text));
    }
}

#[test]
fn a_token_at_the_very_start_of_the_body_is_found() {
    assert_eq!(detectors_of(&github()), [(names::GITHUB_TOKEN, 0)]);
    assert_eq!(detectors_of(&format!("{} is the key", github())), [(names::GITHUB_TOKEN, 0)]);
}

#[test]
fn a_token_at_the_very_end_of_the_body_is_found() {
    assert_eq!(detectors_of("the key is AKIAQWERTYUIOP234567"), [(names::AWS_ACCESS_KEY, 11)]);
    assert_eq!(detectors_of(&format!("use {}", github())), [(names::GITHUB_TOKEN, 4)]);
}

#[test]
fn a_prefix_cut_off_by_the_end_of_the_body_is_no_secret() {
    for text in ["see sk-ant-", "AKIA", "-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----", "eyJ", "xoxb-", "a://"] {
        assert!(detectors::scan(text).is_empty(), "{text}");
    }
}

#[test]
fn an_anthropic_key_holding_the_openai_prefix_is_named_as_anthropic() {
    let key = format!("sk-ant-api03-{}", "aB3cD4eF5gH6iJ7kL8mN9oP0".repeat(4));
    assert_eq!(detectors_of(&format!("key {key}")), [(names::ANTHROPIC_KEY, 4)]);
}

#[test]
fn an_aws_key_starting_with_the_twilio_prefix_is_an_aws_key() {
    assert_eq!(detectors_of("id ACCAQWERTYUIOP234567 here"), [(names::AWS_ACCESS_KEY, 3)]);
}

#[test]
fn multibyte_text_right_before_a_token_counts_as_characters() {
    // Three characters of two, three and four bytes, then the token.
    assert_eq!(detectors_of(&format!("é€😀{}", github())), [(names::GITHUB_TOKEN, 3)]);
    assert_eq!(detectors_of("é€😀AKIAQWERTYUIOP234567"), [(names::AWS_ACCESS_KEY, 3)]);
    assert_eq!(detectors_of("€password=Zq8#rT2!vW"), [(names::LABELLED_SECRET, 10)]);
}

#[test]
fn a_label_in_any_case_is_read_as_a_label() {
    for label in
        ["password", "PASSWORD", "Password", "DB_PASSWORD", "PGPASSWORD", "X-API-KEY", "Client_SECRET", "AUTH_TOKEN"]
    {
        let text = format!("{label}=Zq8rT2vWk9LmN4pX7yBc");
        assert_eq!(detectors_of(&text).first().map(|h| h.0), Some(names::LABELLED_SECRET), "{text}");
    }
}

#[test]
fn a_prefix_split_across_the_base64_layer_is_found_in_the_decoded_text() {
    use base64::Engine as _;
    // One and two bytes before the token shift it so that its encoding holds no `ghp_`.
    for lead in ["a ", "ab ", "abc "] {
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{lead}{} ok", github()));
        assert!(!encoded.contains("ghp_"));
        assert_eq!(detectors_of(&format!("blob {encoded}")), [(names::GITHUB_TOKEN, 5)], "{lead:?}");
    }
}

#[test]
fn a_secret_at_the_end_of_one_mebibyte_of_text_is_found() {
    let line = "The nightly build finished at 02:14 UTC; 1,284 tests passed. ";
    let filler = line.repeat((1 << 20) / line.len() + 1);
    let text = format!("{filler}{}", github());
    assert!(text.len() > 1 << 20);
    assert_eq!(detectors_of(&text), [(names::GITHUB_TOKEN, filler.chars().count())]);
}

#[test]
fn one_mebibyte_of_repeated_prefixes_is_scanned_with_the_same_findings() {
    for unit in ["AKIA", "sk-", "-us", "pass", "eyJ.", "://", "a", "-u ", "passpass=x "] {
        let text = unit.repeat((1 << 20) / unit.len());
        let found = Found::in_text(text.as_bytes());
        assert_eq!(found.all().len(), naive(text.as_bytes()).len(), "{unit}");
        let _ = detectors::scan(&text);
    }
}

/// Maximal runs of `class` at least `min` long, by walking every byte.
fn runs_by_walking(bytes: &[u8], min: usize, class: fn(u8) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = run(bytes, at, class);
        if len == 0 {
            at += 1;
            continue;
        }
        if len >= min {
            out.push((at, at + len));
        }
        at += len;
    }
    out
}

/// Fragments random texts are made of: every string the automaton knows, cut
/// and whole, and the bytes around them.
fn fragment() -> impl Strategy<Value = String> {
    let known: Vec<String> = patterns().map(|p| String::from_utf8_lossy(&p).into_owned()).collect();
    prop_oneof![
        proptest::sample::select(known.clone()),
        (proptest::sample::select(known), 0usize..4).prop_map(|(p, cut)| p.chars().skip(cut).collect()),
        "[A-Za-z0-9+/=_.:-]{0,30}",
        "[ \n\t,;\"'é€😀]{1,3}",
    ]
}

/// Telegram tokens found the plain way: from every run of 8 or more digits,
/// the bot ID, then the `:` and the 35 characters after it.
fn telegram_from_id(bytes: &[u8], found: &Found) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (at, colon) in long_runs(bytes, 8, |b| b.is_ascii_digit()) {
        let digits = colon - at;
        if (8..=10).contains(&digits)
            && !detectors::glued(bytes, at, detectors::is_alnum)
            && bytes.get(colon) == Some(&b':')
            && run(bytes, colon + 1, detectors::is_url_b64) == 35
            && bytes.get(colon + 1..colon + 36).is_some_and(super::super::vendors::random_body)
        {
            detectors::push(&mut spans, found, bytes, names::TELEGRAM_TOKEN, at, colon + 36);
        }
    }
    spans.iter().map(|s| (s.start, s.end)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_one_pass_finds_what_comparing_at_every_position_finds(parts in proptest::collection::vec(fragment(), 0..24)) {
        let text = parts.concat();
        let (found, naive) = (Found::in_text(text.as_bytes()), naive(text.as_bytes()));
        prop_assert_eq!(found.all(), naive.as_slice());
    }

    #[test]
    fn the_walks_of_a_long_text_find_what_comparing_at_every_position_finds(
        parts in proptest::collection::vec((fragment(), "[A-Za-z ]{0,200}"), 4..16),
    ) {
        let text: String = parts.iter().flat_map(|(fragment, filler)| [fragment.as_str(), filler.as_str()]).collect();
        let (found, naive) = (Found::in_text(text.as_bytes()), naive(text.as_bytes()));
        prop_assert_eq!(found.all(), naive.as_slice());
    }

    #[test]
    fn a_span_holds_a_placeholder_exactly_when_reading_it_finds_one(text in "(XXXX|xxxx|REDACTED|redacted|EXAMPLE|example|xx|EXAM|[a-eX ]){0,12}") {
        let bytes = text.as_bytes();
        let found = Found::in_text(bytes);
        for start in 0..=bytes.len() {
            for end in start..=bytes.len() {
                prop_assert_eq!(found.holds_placeholder(start, end), detectors::placeholder(&bytes[start..end]), "{}..{}", start, end);
            }
        }
    }

    #[test]
    fn the_token_runs_hold_every_long_run_of_a_narrower_class(
        text in "([a-cA-C0-2_-]{0,40}|[0-2]{0,30}|[+/=]|[ :.]){0,20}",
        min in 16usize..48,
    ) {
        let bytes = text.as_bytes();
        let runs = detectors::TokenRuns::in_text(bytes);
        let classes: [fn(u8) -> bool; 3] =
            [detectors::is_url_b64, |b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/', |b| b.is_ascii_digit()];
        for class in classes {
            prop_assert_eq!(runs.of(bytes, min, class).collect::<Vec<_>>(), long_runs(bytes, min, class).collect::<Vec<_>>());
        }
    }

    #[test]
    fn telegram_tokens_found_from_their_secret_are_those_found_from_their_id(
        text in "([0-9]{8,10}:[A-Za-z0-9_-]{34,36}|[0-9]{6,12}|:|[A-Za-z0-9_-]{30,37}|[ a.]){0,12}",
    ) {
        let bytes = text.as_bytes();
        let found = Found::in_text(bytes);
        let mut spans = Vec::new();
        super::super::vendors::telegram(bytes, &found, &detectors::TokenRuns::in_text(bytes), &mut spans);
        let by_secret: Vec<(usize, usize)> = spans.iter().map(|s| (s.start, s.end)).collect();
        prop_assert_eq!(by_secret, telegram_from_id(bytes, &found));
    }

    #[test]
    fn probing_finds_the_same_long_runs_as_walking(text in "[a-c0-2 =]{0,200}", min in 1usize..12) {
        let bytes = text.as_bytes();
        let classes: [fn(u8) -> bool; 3] = [|b| b.is_ascii_lowercase(), |b| b.is_ascii_digit(), |b| b != b' '];
        for class in classes {
            prop_assert_eq!(long_runs(bytes, min, class).collect::<Vec<_>>(), runs_by_walking(bytes, min, class));
        }
    }
}

#[test]
#[ignore = "exploration: prints the slowest bodies made of one form repeated"]
fn adversarial_scan_times_of_every_detector_string() {
    // Forms found by hand, then every detector string and label word with each ending.
    let mut units: Vec<String> = [
        "AKIA",
        "sk-",
        "-us",
        "pass",
        "eyJ.",
        "://",
        "a",
        "-u ",
        "passpass=x ",
        "glpat-.",
        "ATATT3=",
        "xoxb-",
        "xoxb-1-",
        "xapp-",
        "xapp-1-",
        "password=x ",
        "<password>x",
        "secret=aB3cD4eF5gH6iJ7kL8mN9oP0 ",
        "aB3cD4eF5gH6iJ7kL8mN9oP0qR ",
        "-----BEGIN ",
        "-----BEGIN PRIVATE KEY-----",
        "SG.",
        "AccountKey=",
        "?sig=",
        "hooks.slack.com/services/T",
        "ya29.",
        "ya29..",
        "dp.st.",
        "hvs.",
        "1234567890:",
        "12345678901234567890123.",
        "eyJhbGciOiJub25lIn0.",
        "user:pass@",
        "a://b:c@",
        "Authorization: Basic ",
        "machine x password ",
        "--password ",
    ]
    .iter()
    .map(|u| u.to_string())
    .collect();
    let strings = ROWS.iter().map(|r| r.prefix).chain(Fixed::ALL.iter().map(|f| f.text()));
    let words = super::super::labelled::LABEL_PIECES.iter().filter_map(|p| core::str::from_utf8(p).ok());
    for s in strings.chain(words) {
        for tail in ["", "=", ".", "-", ":", " ", "a", "=\"", ": ", "x1Y2", "\n"] {
            units.push(format!("{s}{tail}"));
        }
    }
    let mut times: Vec<(f64, String, usize)> = units
        .into_iter()
        .map(|unit| {
            let text = unit.repeat(crate::dlp::MAX_BODY_BYTES / unit.len());
            let t = std::time::Instant::now();
            let hits = detectors::scan(&text).len();
            (t.elapsed().as_secs_f64() * 1e3, unit, hits)
        })
        .collect();
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, unit, hits) in times.iter().take(25) {
        std::println!("{ms:>10.3} ms {hits:>3} hits  {unit:?}");
    }
}
