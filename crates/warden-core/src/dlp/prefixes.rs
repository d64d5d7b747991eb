//! Every fixed string a secret detector starts from, found in one pass.
//!
//! The detectors of [`super::detectors`] and the rows of [`super::vendors`]
//! each begin at a fixed, case-sensitive string (`ghp_`, `AKIA`, `eyJ`,
//! `-----BEGIN `, `://`). Instead of each looking for its own string across
//! the whole text, one Aho-Corasick automaton over all of them finds every
//! occurrence of every string, overlapping ones included (`sk-` inside
//! `sk-ant-api03-`, `AC` inside `ACCA`), in a single pass; each detector then
//! validates only the positions of its own strings, in ascending order, as it
//! did when it looked for them itself. What is found is therefore exactly
//! what a byte-by-byte comparison at every position finds ([`naive`], which
//! the tests compare against).
//!
//! The same pass finds the pieces a secret label's last word holds
//! ([`super::labelled::LABEL_PIECES`], `pass`, `token`, … in any case, as
//! every ASCII case variant of each), so that only the words holding one are
//! read as labels.
//!
//! The automaton depends on no configuration, so it is built once, on the
//! first scan, and shared. Building it cannot fail for this fixed table (a
//! test builds it); if it ever did, every scan would fall back to
//! [`naive`]: slower, never blind.

use super::detectors::PLACEHOLDER_WORDS;
use super::vendors::ROWS;
use crate::prelude::*;
use aho_corasick::automaton::Automaton as _;
use aho_corasick::automaton::StateID;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};
use once_cell::race::OnceBox;

/// The fixed strings of the detectors that are not vendor rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fixed {
    PemBegin,
    AwsAkia,
    AwsAsia,
    AwsAbia,
    AwsAcca,
    SendGrid,
    SlackApp,
    MailchimpRegion,
    AzureAccountKey,
    AzureSig,
    SlackXoxb,
    SlackXoxp,
    SlackXoxa,
    SlackXoxr,
    SlackXoxs,
    SlackWebhook,
    OpenAi,
    Jwt,
    UrlScheme,
    UserFlag,
}

impl Fixed {
    /// Every fixed string, in declaration order.
    pub(super) const ALL: &'static [Fixed] = &[
        Fixed::PemBegin,
        Fixed::AwsAkia,
        Fixed::AwsAsia,
        Fixed::AwsAbia,
        Fixed::AwsAcca,
        Fixed::SendGrid,
        Fixed::SlackApp,
        Fixed::MailchimpRegion,
        Fixed::AzureAccountKey,
        Fixed::AzureSig,
        Fixed::SlackXoxb,
        Fixed::SlackXoxp,
        Fixed::SlackXoxa,
        Fixed::SlackXoxr,
        Fixed::SlackXoxs,
        Fixed::SlackWebhook,
        Fixed::OpenAi,
        Fixed::Jwt,
        Fixed::UrlScheme,
        Fixed::UserFlag,
    ];

    /// The string itself.
    pub(super) const fn text(self) -> &'static str {
        match self {
            Fixed::PemBegin => "-----BEGIN ",
            Fixed::AwsAkia => "AKIA",
            Fixed::AwsAsia => "ASIA",
            Fixed::AwsAbia => "ABIA",
            Fixed::AwsAcca => "ACCA",
            Fixed::SendGrid => "SG.",
            Fixed::SlackApp => "xapp-",
            Fixed::MailchimpRegion => "-us",
            Fixed::AzureAccountKey => "AccountKey=",
            Fixed::AzureSig => "sig=",
            Fixed::SlackXoxb => "xoxb-",
            Fixed::SlackXoxp => "xoxp-",
            Fixed::SlackXoxa => "xoxa-",
            Fixed::SlackXoxr => "xoxr-",
            Fixed::SlackXoxs => "xoxs-",
            Fixed::SlackWebhook => "hooks.slack.com/services/",
            Fixed::OpenAi => "sk-",
            Fixed::Jwt => "eyJ",
            Fixed::UrlScheme => "://",
            Fixed::UserFlag => "-u",
        }
    }

    fn id(self) -> usize {
        ROWS.len() + self as usize
    }
}

/// Which string: a vendor row (by its index in [`ROWS`]) or a fixed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix {
    Row(usize),
    Fixed(Fixed),
}

impl Prefix {
    fn id(self) -> usize {
        match self {
            Prefix::Row(i) => i,
            Prefix::Fixed(f) => f.id(),
        }
    }
}

/// The first pattern id of the placeholder words.
fn first_placeholder_id() -> usize {
    ROWS.len() + Fixed::ALL.len()
}

/// The first pattern id of the label pieces' case variants; they run to the end.
fn first_piece_id() -> usize {
    first_placeholder_id() + PLACEHOLDER_WORDS.len()
}

/// Every ASCII case variant of `piece` (`key`, `Key`, `kEy`, … `KEY`).
fn case_variants(piece: &'static [u8]) -> impl Iterator<Item = Vec<u8>> {
    let letters = piece.iter().filter(|b| b.is_ascii_alphabetic()).count();
    (0u32..1 << letters).map(move |mask| {
        let mut bit = 0;
        piece
            .iter()
            .map(|&b| {
                if !b.is_ascii_alphabetic() {
                    return b;
                }
                let upper = mask >> bit & 1 == 1;
                bit += 1;
                if upper { b.to_ascii_uppercase() } else { b.to_ascii_lowercase() }
            })
            .collect()
    })
}

/// Every string, in pattern-id order: the vendor rows, [`Fixed::ALL`], the
/// placeholder words, then the label pieces' case variants.
pub(super) fn patterns() -> impl Iterator<Item = Vec<u8>> {
    ROWS.iter()
        .map(|r| r.prefix.as_bytes().to_vec())
        .chain(Fixed::ALL.iter().map(|f| f.text().as_bytes().to_vec()))
        .chain(PLACEHOLDER_WORDS.iter().map(|w| w.to_vec()))
        .chain(super::labelled::LABEL_PIECES.iter().flat_map(|p| case_variants(p)))
}

static SEARCHER: OnceBox<Option<DFA>> = OnceBox::new();

/// The shared automaton, built on first use; `None` if it could not be built.
fn searcher() -> Option<&'static DFA> {
    SEARCHER.get_or_init(|| Box::new(build())).as_ref()
}

fn build() -> Option<DFA> {
    DFA::builder()
        .match_kind(MatchKind::Standard)
        .start_kind(StartKind::Unanchored)
        // No few rare bytes start these strings, so a prefilter would only cost.
        .prefilter(false)
        .build(patterns())
        .ok()
}

/// Texts shorter than this are searched by one walk of the automaton; longer
/// ones by [`WALKS`] walks, over each part, at once.
const INTERLEAVE_MIN_BYTES: usize = 512;

/// How many parts a long text is walked in, side by side.
pub(super) const WALKS: usize = 4;

/// Every occurrence of every string, by one step of the automaton a byte;
/// `None` if the automaton cannot search (it always can; see the module notes).
///
/// A long text is walked as four parts side by side. One walk waits on its
/// last transition before it can take the next (a chain of dependent loads);
/// walks over different parts do not wait on each other, so the processor
/// overlaps them. Measured on a 32 KiB message through the component: four
/// walks take 96 µs where two took 108 (natively 54 and 51 µs: the
/// component is what the target measures). Each walk but the first starts
/// `max_pattern_len - 1` bytes before its part, so an occurrence ending in
/// the part lies wholly in what it read, and it reports only what ends in
/// its part: each occurrence is found once, by the walk of the part it ends
/// in. The last part also takes the bytes the division leaves over.
fn search(dfa: &DFA, bytes: &[u8], hits: &mut Vec<(usize, usize)>) -> Option<()> {
    let start = dfa.start_state(Anchored::No).ok()?;
    let overlap = dfa.max_pattern_len().saturating_sub(1);
    if bytes.len() < INTERLEAVE_MIN_BYTES.max(WALKS * (overlap + 1)) {
        return walk(dfa, bytes, 0, 0, start, hits);
    }
    let part = bytes.len() / WALKS;
    let (f1, f2, f3) = (part - overlap, 2 * part - overlap, 3 * part - overlap);
    let (s0, s1, s2, s3) = (bytes.get(..part)?, bytes.get(f1..)?, bytes.get(f2..)?, bytes.get(f3..)?);
    let mut sids = [start; WALKS];
    for (i, (((&a, &b), &c), &d)) in s0.iter().zip(s1).zip(s2).zip(s3).enumerate() {
        sids[0] = dfa.next_state(Anchored::No, sids[0], a);
        sids[1] = dfa.next_state(Anchored::No, sids[1], b);
        sids[2] = dfa.next_state(Anchored::No, sids[2], c);
        sids[3] = dfa.next_state(Anchored::No, sids[3], d);
        if dfa.is_special(sids[0]) {
            report(dfa, sids[0], i, hits)?;
        }
        if i >= overlap {
            if dfa.is_special(sids[1]) {
                report(dfa, sids[1], f1 + i, hits)?;
            }
            if dfa.is_special(sids[2]) {
                report(dfa, sids[2], f2 + i, hits)?;
            }
            if dfa.is_special(sids[3]) {
                report(dfa, sids[3], f3 + i, hits)?;
            }
        }
    }
    walk(dfa, bytes.get(f1 + part..2 * part)?, f1 + part, part, sids[1], hits)?;
    walk(dfa, bytes.get(f2 + part..3 * part)?, f2 + part, 2 * part, sids[2], hits)?;
    walk(dfa, bytes.get(f3 + part..)?, f3 + part, 3 * part, sids[3], hits)
}

/// Walks `bytes`, which sit at `offset` in the text, from state `sid`,
/// reporting the occurrences that end at or after `report_from`.
fn walk(
    dfa: &DFA,
    bytes: &[u8],
    offset: usize,
    report_from: usize,
    mut sid: StateID,
    hits: &mut Vec<(usize, usize)>,
) -> Option<()> {
    for (i, &b) in bytes.iter().enumerate() {
        sid = dfa.next_state(Anchored::No, sid, b);
        if dfa.is_special(sid) && offset + i >= report_from {
            report(dfa, sid, offset + i, hits)?;
        }
    }
    Some(())
}

/// Records the occurrences of the match state `sid`, reached on the byte at `at`.
fn report(dfa: &DFA, sid: StateID, at: usize, hits: &mut Vec<(usize, usize)>) -> Option<()> {
    if dfa.is_dead(sid) {
        return None;
    }
    for k in 0..dfa.match_len(sid) {
        let pattern = dfa.match_pattern(sid, k);
        let start = (at + 1).checked_sub(dfa.pattern_len(pattern))?;
        hits.push((pattern.as_usize(), start));
    }
    Some(())
}

/// Where every string occurs in one text: (pattern id, start), sorted.
pub(super) struct Found {
    hits: Vec<(usize, usize)>,
    /// Where each placeholder word starts, ascending, and the least end of
    /// the words from there on, so a span's question is one binary search.
    placeholder_starts: Vec<usize>,
    placeholder_min_ends: Vec<usize>,
}

impl Found {
    /// Finds every occurrence of every string in `bytes`.
    pub(super) fn in_text(bytes: &[u8]) -> Found {
        let mut hits = Vec::new();
        if searcher().and_then(|dfa| search(dfa, bytes, &mut hits)).is_none() {
            hits = naive(bytes);
        }
        hits.sort_unstable();
        let (first, last) = (first_placeholder_id(), first_piece_id());
        let mut words: Vec<(usize, usize)> = hits
            .iter()
            .filter(|&&(p, _)| (first..last).contains(&p))
            .map(|&(p, at)| (at, at + PLACEHOLDER_WORDS.get(p - first).map_or(0, |w| w.len())))
            .collect();
        words.sort_unstable();
        let mut least = usize::MAX;
        let mut min_ends: Vec<usize> = words
            .iter()
            .rev()
            .map(|&(_, end)| {
                least = least.min(end);
                least
            })
            .collect();
        min_ends.reverse();
        Found { hits, placeholder_starts: words.iter().map(|&(at, _)| at).collect(), placeholder_min_ends: min_ends }
    }

    /// Whether a placeholder word lies wholly within `start..end`.
    pub(super) fn holds_placeholder(&self, start: usize, end: usize) -> bool {
        let i = self.placeholder_starts.partition_point(|&at| at < start);
        self.placeholder_min_ends.get(i).is_some_and(|&least| least <= end)
    }

    /// Byte positions where `prefix` starts, in ascending order.
    pub(super) fn starts(&self, prefix: Prefix) -> impl Iterator<Item = usize> + '_ {
        let id = prefix.id();
        let from = self.hits.partition_point(|&(p, _)| p < id);
        self.hits.get(from..).unwrap_or_default().iter().take_while(move |&&(p, _)| p == id).map(|&(_, at)| at)
    }

    /// Byte positions where a label piece (in any case) or `-u` starts, ascending.
    pub(super) fn label_starts(&self) -> Vec<usize> {
        let from = self.hits.partition_point(|&(p, _)| p < first_piece_id());
        let pieces = self.hits.get(from..).unwrap_or_default().iter().map(|&(_, at)| at);
        let mut out: Vec<usize> = pieces.chain(self.starts(Prefix::Fixed(Fixed::UserFlag))).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every (pattern id, start), sorted.
    #[cfg(test)]
    pub(super) fn all(&self) -> &[(usize, usize)] {
        &self.hits
    }
}

/// The same hits by comparing every string at every position: the meaning of
/// [`Found::in_text`], and its fallback.
pub(super) fn naive(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut hits = Vec::new();
    for (id, pattern) in patterns().enumerate() {
        let last = bytes.len().saturating_sub(pattern.len());
        hits.extend((0..=last).filter(|&i| bytes.get(i..i + pattern.len()) == Some(&pattern[..])).map(|i| (id, i)));
    }
    hits.sort_unstable();
    hits
}

/// Whether the automaton builds (it always should; see the module notes).
#[cfg(test)]
pub(super) fn automaton_builds() -> bool {
    searcher().is_some()
}

#[cfg(test)]
#[path = "prefix_tests.rs"]
mod tests;
