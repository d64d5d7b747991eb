//! [`super::path_candidates`] against a plain statement of what it finds,
//! on words built from the characters that decide it.

use super::path_candidates;
use crate::prelude::*;
use proptest::prelude::*;

/// The parts of an argument that may name a file, found by searching the
/// text for each marker in turn.
fn reference(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some(file) = text.strip_prefix('@').or_else(|| text.strip_prefix('<')) {
        out.push(file);
    } else if text.starts_with("--") {
        if let Some((_, value)) = text.split_once('=') {
            out.push(value.trim_start_matches('@'));
        }
    } else if !text.starts_with('-') {
        out.push(text);
        if let Some((_, value)) = text.split_once("=@").or_else(|| text.split_once("=<")) {
            out.push(value);
        } else if let Some((key, value)) = text.split_once('=')
            && !key.contains('/')
            && !value.is_empty()
        {
            out.push(value);
        }
    }
    out.into_iter().filter(|s| !s.is_empty() && !s.contains("://")).collect()
}

#[test]
fn the_marker_searched_first_wins_wherever_the_other_one_is() {
    let cases: &[(&str, &[&str])] = &[
        ("a=<b=@c", &["a=<b=@c", "c"]),
        ("a=@b=<c", &["a=@b=<c", "b=<c"]),
        ("k=<f", &["k=<f", "f"]),
        ("dir/k=v", &["dir/k=v"]),
        ("k=https://x/y", &[]),
        ("--data=@file", &["file"]),
        ("@-", &["-"]),
        ("-o", &[]),
        ("=", &["="]),
        ("é=@ü", &["é=@ü", "ü"]),
    ];
    for (text, want) in cases {
        assert_eq!(path_candidates(text).collect::<Vec<_>>(), *want, "{text}");
        assert_eq!(reference(text), *want, "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]
    #[test]
    fn path_candidates_are_what_searching_for_each_marker_finds(text in "[-=@<:/aé]{0,12}") {
        prop_assert_eq!(path_candidates(&text).collect::<Vec<_>>(), reference(&text));
    }
}
