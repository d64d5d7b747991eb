//! Instructions aimed at the model, as rows of word patterns.
//!
//! A pattern is a sequence of steps over the folded words of
//! [`super::text::words`]: `a|b|c` matches one of those words (`instruct*`
//! any word starting so), `~N` skips up to N words, `@url` and `@path` match
//! a web address and a protected path. Words are matched across line breaks,
//! so an instruction split over lines is still one.

use super::text::{self, quote};
use super::{Sink, push_at, rules};
use crate::model::Risk;
use crate::prelude::*;

/// Where a text stands, which decides which rows apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Text that may instruct the model (a skill's body, a script, a log):
    /// only the clearly malicious rows apply.
    Instructs,
    /// Text that should only describe (tool and parameter descriptions, front
    /// matter, manifests, hidden markup): every row applies.
    Describes,
}

/// One pattern row.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// What it finds, as the finding's detail says it.
    pub what: &'static str,
    pub pattern: &'static str,
    /// Whether it applies only where text should describe.
    pub describes_only: bool,
    pub severity: Risk,
}

const fn row(what: &'static str, pattern: &'static str, describes_only: bool, severity: Risk) -> Row {
    Row { what, pattern, describes_only, severity }
}

/// Every row of instructions aimed at the model.
pub const ROWS: &[Row] = &[
    row(
        "tells the model to ignore its earlier instructions",
        "ignore|disregard|forget|override|overrule|supersede ~2 previous|prior|earlier|above|preceding|foregoing|all|any|your|system|developer|original|initial|existing|other ~2 instruction*|direction*|guideline*|directive*|guardrail*|safeguard*|polic*|command*",
        false,
        Risk::High,
    ),
    row(
        "tells the model to ignore its earlier rules",
        "ignore|disregard|forget|override ~1 previous|prior|earlier|above|preceding|your|the ~1 system|safety ~1 rules|prompt|prompts|message",
        false,
        Risk::High,
    ),
    row(
        "tells the model its real instructions are these",
        "your|the ~1 new|real|actual|true|updated ~1 instruction* ~1 are|is|follow|below|replace*|supersede*",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "not ~1 tell|inform|notify|alert|warn ~1 the|this|your ~1 user|users|human|operator|owner",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "not ~1 mention|reveal|disclose|report|say ~2 this|these|that|it|anything ~4 user|users|human|operator|owner|anyone",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "without ~3 user|users|human|operator|owner ~2 knowing|knowledge|noticing|consent",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "without ~1 telling|informing|notifying|alerting ~1 the|your ~1 user|users|human|operator|owner",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "hide|conceal ~4 from ~2 user|users|human|operator|owner",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "keep ~3 secret|hidden|quiet ~2 from ~2 user|users|human|operator|owner",
        false,
        Risk::High,
    ),
    row(
        "tells the model to keep something from the user",
        "user|users ~2 must|should|need|needs|will ~1 not ~1 know|see|notice|learn|find|be",
        false,
        Risk::High,
    ),
    row("sends a protected path to an address", "@path ~16 @url", false, Risk::Critical),
    row("sends a protected path to an address", "@url ~16 @path", false, Risk::Critical),
    row("names a protected path where text should only describe", "@path", true, Risk::Critical),
    row(
        "tells the model to send data to an address",
        "send|post|upload|forward|transmit|exfiltrate|submit|leak|copy|report|pipe|push|sync|mirror|beacon ~8 to|at|via|into ~2 @url",
        true,
        Risk::High,
    ),
    row(
        "tells the model to read something first",
        "before|prior ~2 using|calling|running|invoking|use ~3 this|the ~1 tool ~6 read|cat|open|load|fetch|send|include|collect|gather",
        true,
        Risk::High,
    ),
    row(
        "tells the model to pass file contents into an argument",
        "pass|include|put|add|append|attach|insert ~4 content*|contents|text|value ~2 of ~3 file|files|key|keys|config* ~8 parameter|argument|field|notes|sidenote|comment",
        true,
        Risk::High,
    ),
];

/// Markers that address the model directly, looked for in the lower-case text.
pub const MARKERS: &[&str] = &[
    "<important>",
    "</important>",
    "<system>",
    "</system>",
    "[system]",
    "<instructions>",
    "<secret>",
    "[inst]",
    "<|im_start|>",
];

/// Most lines one match may span: an instruction split over a line break is
/// still one, words a paragraph apart are not.
pub const MAX_SPAN_LINES: u32 = 2;

/// The words a match starting at `start` may use: those within
/// [`MAX_SPAN_LINES`] lines of it.
pub fn within(words: &[(String, u32)], start: usize) -> &[(String, u32)] {
    let Some(first) = words.get(start).map(|w| w.1) else { return &[] };
    let end = words
        .iter()
        .skip(start)
        .take(MAX_MATCH_WORDS)
        .position(|w| w.1 >= first.saturating_add(MAX_SPAN_LINES))
        .map_or((start + MAX_MATCH_WORDS).min(words.len()), |p| start + p);
    words.get(..end).unwrap_or(words)
}

/// Most words one match may span (more than any pattern can use), so the
/// work per word stays bounded whatever the length of a line.
pub const MAX_MATCH_WORDS: usize = 64;

/// Scans `text` (whose first line is `first_line`) at `place`.
pub fn scan(text: &str, first_line: u32, place: Place, out: &mut Sink) {
    let words = text::words(text, first_line);
    for r in ROWS {
        if r.describes_only && place == Place::Instructs {
            continue;
        }
        let steps = compile(r.pattern);
        let mut last_line = 0u32;
        for start in 0..words.len() {
            if let Some(line) = words.get(start).map(|w| w.1)
                && line != last_line
                && matches_at(&steps, within(&words, start), start)
            {
                last_line = line;
                push_at(
                    out,
                    rules::MODEL_INSTRUCTIONS,
                    line,
                    r.severity,
                    format!("{}: `{}`", r.what, quote(text::line_text(text, first_line, line))),
                );
            }
        }
    }
    if place == Place::Describes {
        for (i, l) in text.split('\n').enumerate() {
            let lower: String = text::decode_entities(l).chars().flat_map(text::fold_char).collect();
            if let Some(m) = MARKERS.iter().find(|m| lower.contains(*m)) {
                let line = first_line.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
                push_at(
                    out,
                    rules::MODEL_INSTRUCTIONS,
                    line,
                    Risk::Medium,
                    format!("a marker addressed to the model (`{m}`) where text should only describe: `{}`", quote(l)),
                );
            }
        }
    }
}

/// One step of a pattern.
#[derive(Debug)]
pub enum Step<'p> {
    /// One of these words; a trailing `*` matches any word starting so.
    Word(Vec<&'p str>),
    /// Up to this many words of anything.
    Gap(usize),
}

pub fn compile(pattern: &str) -> Vec<Step<'_>> {
    pattern
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_prefix('~').and_then(|n| n.parse().ok()) {
            Some(n) => Step::Gap(n),
            None => Step::Word(s.split('|').collect()),
        })
        .collect()
}

fn word_matches(alternatives: &[&str], word: &str) -> bool {
    alternatives.iter().any(|a| match a.strip_suffix('*') {
        Some(prefix) => word.starts_with(prefix),
        None => *a == word,
    })
}

/// Whether `steps` match the words from `start`.
pub fn matches_at(steps: &[Step<'_>], words: &[(String, u32)], start: usize) -> bool {
    let Some((first, rest)) = steps.split_first() else { return true };
    match first {
        Step::Word(alts) => {
            words.get(start).is_some_and(|(w, _)| word_matches(alts, w)) && matches_at(rest, words, start + 1)
        }
        Step::Gap(n) => (0..=*n).any(|skip| start + skip <= words.len() && matches_at(rest, words, start + skip)),
    }
}
