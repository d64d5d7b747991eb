use super::*;
use crate::dlp::prefixes::Found;
use proptest::prelude::*;

/// Every word that makes a key a label, alone.
fn label_words() -> Vec<&'static str> {
    let mut words: Vec<&str> = STRONG_WORDS.iter().chain(STRONG_ENDINGS).chain(WEAK_WORDS).copied().collect();
    words.extend(["key", "token"]);
    words
}

/// Values after labels the way the detector once found them: every run of
/// label bytes read as a key, none skipped.
fn labelled_reading_every_run(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut reading = Reading { taken: Taken::of(&[]), values: ValueEnds::default(), lines: LineStarts::default() };
    let mut at = 0;
    while at < bytes.len() {
        let len = run(bytes, at, is_label_byte);
        if len == 0 {
            at += 1;
            continue;
        }
        let end = at + len;
        if let Some(key) = text.get(at..end) {
            label_at(text, Key { start: at, text: key, end }, &mut reading, &mut spans);
        }
        at = end;
    }
    spans.iter().map(|s| (s.start, s.end)).collect()
}

fn labelled_now(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    labelled(text, &Found::in_text(text.as_bytes()), &mut spans);
    spans.iter().map(|s| (s.start, s.end)).collect()
}

#[test]
fn every_label_word_holds_a_label_piece_in_any_case() {
    for word in label_words() {
        assert!(holds_secret_word(word.as_bytes()), "{word}");
        assert!(holds_secret_word(word.to_ascii_uppercase().as_bytes()), "{word}");
        assert!(strength(word).is_some() || word == "key", "{word} is a label word");
    }
}

#[test]
fn a_key_read_as_a_label_always_holds_a_label_piece() {
    let keys = ["DB_PASSWORD", "x-api-key", "clientSecret", "spring.datasource.password", "AUTH", "authorization"];
    for key in keys.iter().chain(&["status", "passed", "tokens_used", "keyboard", "author", "max_tokens"]) {
        assert!(strength(key).is_none() || holds_secret_word(key.as_bytes()), "{key}");
    }
    for key in keys {
        assert!(strength(key).is_some(), "{key} is a label");
    }
}

#[test]
fn skipping_runs_without_a_label_piece_finds_the_same_values() {
    let texts = [
        "password=Zq8#rT2!vW and PGPASSWORD=hunter2hunter2",
        "curl -u ada:S3cr3tPa55 https://x",
        "curl --user ada:S3cr3tPa55 https://x",
        "machine h login ada password Zq8rT2vWk9",
        "€password=Zq8#rT2!vW",
        "<password>S3cretValue9</password>",
        "\"Authorization\": \"Bearer aB3cD4eF5gH6iJ7kL8mN9oP0\"",
        "X-API-KEY: aB3cD4eF5gH6iJ7kL8mN9oP0",
        "key=value pass=word token is aB3cD4eF5gH6iJ7kL8mN9oP0",
    ];
    for text in texts {
        assert_eq!(labelled_now(text), labelled_reading_every_run(text), "{text}");
        assert!(!labelled_now(text).is_empty(), "{text}");
    }
}

fn label_fragment() -> impl Strategy<Value = String> {
    let words: Vec<String> = label_words().into_iter().map(String::from).collect();
    prop_oneof![
        proptest::sample::select(words.clone()),
        proptest::sample::select(words).prop_map(|w| w.to_ascii_uppercase()),
        proptest::sample::select(vec!["-u", "--user", "--", "machine ", "default ", "\n", "<", ">", "\"", "'", " is "])
            .prop_map(String::from),
        "[=: ]{1,2}",
        "[A-Za-z0-9_.-]{1,12}",
        "[ \t,;é€]{1,2}",
        "[A-Za-z0-9!#%]{6,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn skipping_runs_without_a_label_piece_finds_the_same_values_in_any_text(
        parts in proptest::collection::vec(label_fragment(), 0..20),
    ) {
        let text = parts.concat();
        prop_assert_eq!(labelled_now(&text), labelled_reading_every_run(&text));
    }
}

#[test]
fn every_label_word_is_written_in_lower_case() {
    // Keys are compared with these ignoring ASCII case, as lower-cased keys once were.
    for list in [STRONG_WORDS, STRONG_ENDINGS, KEY_QUALIFIERS, WEAK_WORDS] {
        for word in list {
            assert!(!word.bytes().any(|b| b.is_ascii_uppercase()), "{word}");
        }
    }
}

#[test]
fn a_key_splits_into_words_at_separators_and_at_lower_to_upper_changes() {
    let cases: &[(&str, usize, Option<&str>, Option<&str>)] = &[
        ("apiKey", 2, Some("api"), Some("Key")),
        ("db.pass", 2, Some("db"), Some("pass")),
        ("X-Auth-Token", 3, Some("Auth"), Some("Token")),
        ("myPASSWORD", 2, Some("my"), Some("PASSWORD")),
        ("client2Secret", 2, Some("client2"), Some("Secret")),
        ("__token__", 1, None, Some("token")),
        ("API_KEY", 2, Some("API"), Some("KEY")),
        ("-._", 0, None, None),
        ("", 0, None, None),
        ("clé_secrète", 2, Some("clé"), Some("secrète")),
    ];
    for &(key, count, before, last) in cases {
        let words = LastWords::of(key);
        assert_eq!((words.count, words.before, words.last), (count, before, last), "{key}");
    }
}

/// The placeholder test as it was written first: the value lower-cased, then each piece looked for.
fn placeholder_by_lower_casing(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if NOT_SECRETS.contains(&lower.as_str()) || PLACEHOLDER_PIECES.iter().any(|p| lower.contains(p)) {
        return true;
    }
    let first = lower.bytes().next();
    let second = lower.as_bytes().get(1).copied();
    let wrapped = |open: u8, close: u8| first == Some(open) && lower.ends_with(char::from(close));
    let variable = first == Some(b'$') && second.is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'{');
    let same = lower.bytes().all(|b| Some(b) == first);
    variable || same || wrapped(b'<', b'>') || wrapped(b'{', b'}') || wrapped(b'%', b'%') || wrapped(b'[', b']')
}

fn placeholder_fragment() -> impl Strategy<Value = String> {
    let pieces: Vec<String> = PLACEHOLDER_PIECES.iter().chain(NOT_SECRETS).map(|p| String::from(*p)).collect();
    prop_oneof![
        proptest::sample::select(pieces.clone()),
        // The same pieces in mixed case, letter by letter.
        (proptest::sample::select(pieces), any::<u64>()).prop_map(|(p, bits)| {
            p.chars()
                .enumerate()
                .map(|(i, c)| if bits >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c })
                .collect()
        }),
        r"[A-Za-z0-9$%<>{}\[\]_.*-]{1,6}",
        "[é€\u{2026}ß]{1,2}",
    ]
}

#[test]
fn the_placeholder_automaton_builds() {
    assert!(pieces().is_some());
}

#[test]
fn placeholders_are_told_apart_in_any_case() {
    let cases: &[(&str, bool)] = &[
        ("ChangeMe", true),
        ("YOUR_PASSWORD_HERE", true),
        ("xXxX", true),
        ("ReDaCtEd", true),
        ("R3dAcTeD", false),
        ("Null", true),
        ("${DB_PASSWORD}", true),
        ("<password>", true),
        ("aAaAaA", true),
        ("wait\u{2026}", true),
        ("Zq8#rT2!vW", false),
        ("hunter2hunter2", false),
        ("Exampl3", false),
    ];
    for &(value, expected) in cases {
        assert_eq!(placeholder(value), expected, "{value}");
        assert_eq!(placeholder_by_lower_casing(value), expected, "{value}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn placeholders_found_by_the_automaton_are_those_found_by_lower_casing(
        parts in proptest::collection::vec(placeholder_fragment(), 0..6),
    ) {
        let value = parts.concat();
        prop_assert_eq!(placeholder(&value), placeholder_by_lower_casing(&value), "{:?}", value);
    }
}
