//! Deterministic detection of concrete secrets in message text.
//!
//! Each detector recognises one credential format by its structure (a fixed
//! prefix, an alphabet, a length, a decodable header), so a hit is evidence of
//! a real secret rather than a guess. Vendor formats are rows of
//! [`super::vendors`]; values named by a label and passwords in URLs are
//! [`super::labelled`]. The generic high-entropy detector covers tokens without
//! a known prefix; the exemptions (UUIDs, hashes named as such, commit IDs in
//! repository URLs, public material of [`super::exempt`], placeholders) apply
//! to it and, for placeholders, to the matched span of the prefixed formats. No
//! exemption can be earned by text placed around a prefixed secret:
//! `sha256: ghp_…` is still a GitHub token.
//!
//! A hit names the detector and where it starts, never the matched text, so a
//! verdict, a log line or a counter cannot carry the secret onwards.
//!
//! Work is linear in the text: the fixed strings the detectors start from are
//! found together in one pass ([`super::prefixes`]), the long runs of token
//! bytes are found together in another ([`TokenRuns`], which skips text of
//! short words nearly a run's length at a time), the detectors that read
//! long runs of a byte class look only inside those, and a run measured from
//! many starts is read once ([`RunEnds`]). The text is bounded by [`super::MAX_BODY_BYTES`] before it
//! gets here.

use super::prefixes::{Fixed, Found, Prefix};
use crate::prelude::*;
use base64::Engine as _;

/// Most hits reported for one text; scanning stops after this many.
pub const MAX_HITS: usize = 32;
/// Shortest token the high-entropy detector considers, in characters.
pub const MIN_ENTROPY_TOKEN_CHARS: usize = 24;
/// Shortest all-hex or single-case token the high-entropy detector considers,
/// and only next to a word like `token` or `secret`, in characters.
pub const MIN_CONTEXT_TOKEN_CHARS: usize = 32;
/// Shannon entropy, in bits per character, at or above which a mixed-case
/// alphanumeric token counts as random.
pub const MIN_ENTROPY_BITS: f64 = 4.0;
/// Entropy at or above which a hex or single-case token next to a secret word counts as random.
pub const MIN_CONTEXT_ENTROPY_BITS: f64 = 3.0;
/// Longest average run of one character class (upper, lower, digit, other) in
/// a random-looking token. Words and identifiers have long runs; random
/// base62 or base64 averages about 1.6.
pub const MAX_AVERAGE_CLASS_RUN: f64 = 2.5;
/// Largest share of a random-looking token that may sit in runs of three or
/// more lower-case letters. Identifiers made of words are mostly such runs;
/// random base62 has about 16%.
pub const MAX_WORD_FRACTION: f64 = 0.4;
/// How far before a token the context words are looked for, in bytes.
pub const CONTEXT_BYTES: usize = 40;
/// Fewest base64 characters of key material that make a private key block a secret.
pub const MIN_PRIVATE_KEY_BODY_CHARS: usize = 64;
/// Longest private key block examined, in bytes.
pub const MAX_PRIVATE_KEY_BLOCK_BYTES: usize = 16 * 1024;

/// Detector names, as hits, rules and test data spell them.
pub mod names {
    pub const PRIVATE_KEY: &str = "private-key";
    pub const AWS_ACCESS_KEY: &str = "aws-access-key";
    pub const AWS_SECRET_KEY: &str = "aws-secret-key";
    pub const GITHUB_TOKEN: &str = "github-token";
    pub const GITLAB_TOKEN: &str = "gitlab-token";
    pub const HUGGINGFACE_TOKEN: &str = "huggingface-token";
    pub const SLACK_TOKEN: &str = "slack-token";
    pub const SLACK_WEBHOOK: &str = "slack-webhook";
    pub const OPENAI_KEY: &str = "openai-key";
    pub const ANTHROPIC_KEY: &str = "anthropic-key";
    pub const STRIPE_KEY: &str = "stripe-key";
    pub const SENDGRID_KEY: &str = "sendgrid-key";
    pub const TWILIO_KEY: &str = "twilio-key";
    pub const AZURE_STORAGE_KEY: &str = "azure-storage-key";
    pub const AZURE_SAS: &str = "azure-sas";
    pub const PYPI_TOKEN: &str = "pypi-token";
    pub const DOCKERHUB_TOKEN: &str = "dockerhub-token";
    pub const SHOPIFY_TOKEN: &str = "shopify-token";
    pub const GOOGLE_API_KEY: &str = "google-api-key";
    pub const GOOGLE_OAUTH: &str = "google-oauth";
    pub const NPM_TOKEN: &str = "npm-token";
    pub const DIGITALOCEAN_TOKEN: &str = "digitalocean-token";
    pub const DATABRICKS_TOKEN: &str = "databricks-token";
    pub const MAILGUN_KEY: &str = "mailgun-key";
    pub const MAILCHIMP_KEY: &str = "mailchimp-key";
    pub const SQUARE_TOKEN: &str = "square-token";
    pub const HEROKU_KEY: &str = "heroku-key";
    pub const ATLASSIAN_TOKEN: &str = "atlassian-token";
    pub const LINEAR_KEY: &str = "linear-key";
    pub const NOTION_TOKEN: &str = "notion-token";
    pub const DISCORD_TOKEN: &str = "discord-token";
    pub const TELEGRAM_TOKEN: &str = "telegram-token";
    pub const SENTRY_TOKEN: &str = "sentry-token";
    pub const GRAFANA_TOKEN: &str = "grafana-token";
    pub const VAULT_TOKEN: &str = "vault-token";
    pub const NEWRELIC_KEY: &str = "newrelic-key";
    pub const POSTMAN_KEY: &str = "postman-key";
    pub const AGE_SECRET_KEY: &str = "age-secret-key";
    pub const TAILSCALE_KEY: &str = "tailscale-key";
    pub const GROQ_KEY: &str = "groq-key";
    pub const XAI_KEY: &str = "xai-key";
    pub const REPLICATE_TOKEN: &str = "replicate-token";
    pub const SUPABASE_TOKEN: &str = "supabase-token";
    pub const DOPPLER_TOKEN: &str = "doppler-token";
    pub const PULUMI_TOKEN: &str = "pulumi-token";
    pub const FLY_TOKEN: &str = "fly-token";
    pub const JWT: &str = "jwt";
    pub const URL_CREDENTIALS: &str = "url-credentials";
    pub const LABELLED_SECRET: &str = "labelled-secret";
    pub const HIGH_ENTROPY: &str = "high-entropy";

    /// Every detector.
    pub const ALL: &[&str] = &[
        PRIVATE_KEY,
        AWS_ACCESS_KEY,
        AWS_SECRET_KEY,
        GITHUB_TOKEN,
        GITLAB_TOKEN,
        HUGGINGFACE_TOKEN,
        SLACK_TOKEN,
        SLACK_WEBHOOK,
        OPENAI_KEY,
        ANTHROPIC_KEY,
        STRIPE_KEY,
        SENDGRID_KEY,
        TWILIO_KEY,
        AZURE_STORAGE_KEY,
        AZURE_SAS,
        PYPI_TOKEN,
        DOCKERHUB_TOKEN,
        SHOPIFY_TOKEN,
        GOOGLE_API_KEY,
        GOOGLE_OAUTH,
        NPM_TOKEN,
        DIGITALOCEAN_TOKEN,
        DATABRICKS_TOKEN,
        MAILGUN_KEY,
        MAILCHIMP_KEY,
        SQUARE_TOKEN,
        HEROKU_KEY,
        ATLASSIAN_TOKEN,
        LINEAR_KEY,
        NOTION_TOKEN,
        DISCORD_TOKEN,
        TELEGRAM_TOKEN,
        SENTRY_TOKEN,
        GRAFANA_TOKEN,
        VAULT_TOKEN,
        NEWRELIC_KEY,
        POSTMAN_KEY,
        AGE_SECRET_KEY,
        TAILSCALE_KEY,
        GROQ_KEY,
        XAI_KEY,
        REPLICATE_TOKEN,
        SUPABASE_TOKEN,
        DOPPLER_TOKEN,
        PULUMI_TOKEN,
        FLY_TOKEN,
        JWT,
        URL_CREDENTIALS,
        LABELLED_SECRET,
        HIGH_ENTROPY,
    ];
}

/// One detected secret: which detector and where it starts. Never the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// One of [`names`].
    pub detector: &'static str,
    /// Where the secret starts, in characters from the start of the text (0-based).
    pub offset: usize,
}

/// A hit by byte span, before it is turned into a character offset.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) detector: &'static str,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Every secret in `text`, ordered by position, at most [`MAX_HITS`].
pub fn scan(text: &str) -> Vec<Hit> {
    let spans = spans_of(text, true);
    char_offsets(text, &spans)
}

/// Spans of every detector, one a secret. `decode` also judges base64 that
/// decodes to text by what the text holds (once: the decoded text is not
/// decoded again).
pub(super) fn spans_of(text: &str, decode: bool) -> Vec<Span> {
    let bytes = text.as_bytes();
    let found = Found::in_text(bytes);
    let runs = TokenRuns::in_text(bytes);
    let mut spans: Vec<Span> = Vec::new();
    private_keys(text, &found, &mut spans);
    aws_access_keys(bytes, &found, &mut spans);
    super::vendors::scan(bytes, &found, &runs, &mut spans);
    slack_tokens(bytes, &found, &mut spans);
    slack_webhooks(bytes, &found, &mut spans);
    openai_keys(bytes, &found, &mut spans);
    jwts(bytes, &found, &mut spans);
    aws_secret_keys(text, &runs, &mut spans);
    super::labelled::url_credentials(text, &found, &mut spans);
    super::labelled::labelled(text, &found, &mut spans);
    high_entropy(text, &found, &runs, decode, &mut spans);
    spans.sort_by_key(|s| (s.start, s.end));
    // One secret, one hit: a span inside an earlier one adds nothing.
    let mut kept: Vec<Span> = Vec::new();
    for span in spans {
        if kept.last().is_some_and(|k| span.start < k.end) {
            continue;
        }
        kept.push(span);
        if kept.len() == MAX_HITS {
            break;
        }
    }
    kept
}

fn char_offsets(text: &str, spans: &[Span]) -> Vec<Hit> {
    let mut out = Vec::with_capacity(spans.len());
    let mut chars = 0usize;
    let mut at = 0usize;
    for span in spans {
        chars += text.get(at..span.start).map_or(0, |s| s.chars().count());
        at = span.start;
        out.push(Hit { detector: span.detector, offset: chars });
    }
    out
}

pub(super) fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_b32(b: u8) -> bool {
    b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)
}

/// A byte of standard base64, padding aside.
pub(super) fn is_b64(b: u8) -> bool {
    is_alnum(b) || b == b'+' || b == b'/'
}

pub(super) fn is_url_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Whether the byte before `at` would make `at` the middle of a word.
pub(super) fn glued(bytes: &[u8], at: usize, part_of_word: impl Fn(u8) -> bool) -> bool {
    at.checked_sub(1).and_then(|i| bytes.get(i)).is_some_and(|&b| part_of_word(b))
}

/// Length of the run of `class` bytes starting at `at`.
pub(super) fn run(bytes: &[u8], at: usize, class: impl Fn(u8) -> bool) -> usize {
    bytes.get(at..).map_or(0, |rest| rest.iter().take_while(|&&b| class(b)).count())
}

/// Length of the run of `class` bytes starting at `at`, counted up to `limit`:
/// where only the first `limit` bytes matter, a long run is not read to its end.
pub(super) fn run_upto(bytes: &[u8], at: usize, class: impl Fn(u8) -> bool, limit: usize) -> usize {
    bytes.get(at..).map_or(0, |rest| rest.iter().take(limit).take_while(|&&b| class(b)).count())
}

/// The maximal runs of `class` bytes at least `min` long, in order.
///
/// A run at least `min` long that starts at or after `next` (where no run
/// starts earlier) holds the byte `min - 1` past `next`, so the window up to
/// that byte is read backwards: a byte not of `class` in it moves `next` just
/// past that byte, in text of short words nearly `min` bytes at once, and a
/// window wholly of `class` is the start of a run, which is then read to its
/// end. Each byte is read at most twice.
pub(super) fn long_runs<'a>(
    bytes: &'a [u8],
    min: usize,
    class: impl Fn(u8) -> bool + Copy + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let min = min.max(1);
    // No run starts before `next`: the byte just before it is not of `class` (or `next` is 0).
    let mut next = 0usize;
    core::iter::from_fn(move || {
        loop {
            let probe = next + min - 1;
            let window = bytes.get(next..=probe)?;
            // A run of `min` from `next` on holds `probe`; read back from it.
            match window.iter().rposition(|&b| !class(b)) {
                Some(gap) => next += gap + 1,
                None => {
                    let end = probe + 1 + run(bytes, probe + 1, class);
                    let start = next;
                    next = end + 1;
                    return Some((start, end));
                }
            }
        }
    })
}

/// Words that make a matched span a documentation placeholder.
pub(super) const PLACEHOLDER_WORDS: &[&[u8]] = &[b"XXXX", b"xxxx", b"REDACTED", b"redacted", b"EXAMPLE", b"example"];

/// Whether a matched span is a documentation placeholder rather than a secret.
pub(super) fn placeholder(span: &[u8]) -> bool {
    PLACEHOLDER_WORDS.iter().any(|w| span.windows(w.len()).any(|win| win == *w))
}

/// Records the span `start..end` of `bytes` (the text `found` was found in)
/// unless it is a placeholder, which `found` answers without reading the span.
pub(super) fn push(
    spans: &mut Vec<Span>,
    found: &Found,
    bytes: &[u8],
    detector: &'static str,
    start: usize,
    end: usize,
) {
    if bytes.get(start..end).is_some() && !found.holds_placeholder(start, end) {
        spans.push(Span { detector, start, end });
    }
}

/// The spans found so far, asked whether a range overlaps one of them in
/// logarithmic time: a text holding thousands of labels would otherwise
/// compare each with every span found before it.
pub(super) struct Taken {
    /// The spans found before, ordered by start, each with the greatest end up to it.
    before: Vec<(usize, usize)>,
    /// The spans added since, by start. Each overlaps no span found before it, so
    /// they are disjoint, and their ends are in the order of their starts.
    own: BTreeMap<usize, usize>,
}

impl Taken {
    pub(super) fn of(spans: &[Span]) -> Taken {
        let mut before: Vec<(usize, usize)> = spans.iter().map(|s| (s.start, s.end)).collect();
        before.sort_unstable();
        let mut reach = 0;
        for (_, end) in &mut before {
            reach = reach.max(*end);
            *end = reach;
        }
        Taken { before, own: BTreeMap::new() }
    }

    /// Whether `start..end` overlaps a span found so far.
    pub(super) fn overlaps(&self, start: usize, end: usize) -> bool {
        let earlier = self.before.partition_point(|&(s, _)| s < end);
        let before = earlier.checked_sub(1).and_then(|i| self.before.get(i)).is_some_and(|&(_, reach)| reach > start);
        before || self.own.range(..end).next_back().is_some_and(|(_, &e)| e > start)
    }

    /// Adds a span, unless it overlaps one found before.
    pub(super) fn push(&mut self, spans: &mut Vec<Span>, detector: &'static str, start: usize, end: usize) {
        if !self.overlaps(start, end) {
            self.own.insert(start, end);
            spans.push(Span { detector, start, end });
        }
    }
}

/// Where the line holding a position starts, for positions asked in
/// ascending order: the text is searched for line ends once, instead of back
/// to the start of the line from every position (a message of one long line
/// holding thousands of tokens would be read again from each). A position
/// behind the last one asked is searched afresh.
#[derive(Debug, Default)]
pub(super) struct LineStarts {
    searched: usize,
    start: usize,
}

impl LineStarts {
    pub(super) fn of(&mut self, bytes: &[u8], at: usize) -> usize {
        let last_newline =
            |from: usize| bytes.get(from..at).and_then(|b| memchr::memrchr(b'\n', b)).map(|i| from + i + 1);
        if at < self.searched {
            return last_newline(0).unwrap_or(0);
        }
        if let Some(start) = last_newline(self.searched) {
            self.start = start;
        }
        self.searched = at;
        self.start
    }
}

/// The runs of one class a detector measures from many starts: a start
/// inside the run measured last shares its end, so a long run is read once.
pub(super) struct RunEnds<F> {
    class: F,
    /// `from..end` is all of `class`, and the byte at `end` is not (or the text ends).
    from: usize,
    end: usize,
}

impl<F: Fn(u8) -> bool> RunEnds<F> {
    pub(super) fn new(class: F) -> RunEnds<F> {
        RunEnds { class, from: 1, end: 0 }
    }

    /// The length of the run of the class starting at `at`.
    pub(super) fn len(&mut self, bytes: &[u8], at: usize) -> usize {
        if !(self.from <= at && at <= self.end) {
            self.from = at;
            self.end = at + run(bytes, at, &self.class);
        }
        self.end - at
    }
}

/// PEM and PGP private key blocks with real key material in them.
fn private_keys(text: &str, found: &Found, spans: &mut Vec<Span>) {
    const BEGIN: &str = Fixed::PemBegin.text();
    for start in found.starts(Prefix::Fixed(Fixed::PemBegin)) {
        let Some(after) = text.get(start + BEGIN.len()..) else {
            continue;
        };
        let label_len = after.bytes().take(64).take_while(|b| b.is_ascii_uppercase() || *b == b' ').count();
        let Some(label) = after.get(..label_len) else {
            continue;
        };
        if !(label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK")) {
            continue;
        }
        let Some(rest) = after.get(label_len..).and_then(|r| r.strip_prefix("-----")) else {
            continue;
        };
        let block = rest.get(..rest.len().min(MAX_PRIVATE_KEY_BLOCK_BYTES)).unwrap_or(rest);
        // The body ends at the next armour line, so blocks never overlap and
        // the whole scan stays linear however many headers the text holds.
        let body = block.split("-----").next().unwrap_or(block);
        // Armour headers such as `Proc-Type:` are not key material.
        let material: usize = body
            .lines()
            .filter(|line| !line.contains(':'))
            .map(|line| {
                let cleaned = line.replace("REDACTED", "").replace("EXAMPLE", "").replace("XXXX", "");
                cleaned.bytes().filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')).count()
            })
            .sum();
        if material >= MIN_PRIVATE_KEY_BODY_CHARS {
            let end = start + BEGIN.len() + label_len + 5;
            spans.push(Span { detector: names::PRIVATE_KEY, start, end });
        }
    }
}

/// AWS access key IDs: a four-letter kind and sixteen base32 characters.
fn aws_access_keys(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for prefix in [Fixed::AwsAkia, Fixed::AwsAsia, Fixed::AwsAbia, Fixed::AwsAcca] {
        for start in found.starts(Prefix::Fixed(prefix)) {
            if glued(bytes, start, is_alnum) {
                continue;
            }
            let body = start + 4;
            if run_upto(bytes, body, is_b32, 16) < 16 {
                continue;
            }
            let end = body + 16;
            // An all-capital word that happens to start with `ASIA` is not a key:
            // a key followed by more capitals must at least contain a digit.
            let at_boundary = !bytes.get(end).is_some_and(|&b| is_alnum(b));
            let has_digit = bytes.get(body..end).is_some_and(|s| s.iter().any(u8::is_ascii_digit));
            if at_boundary || has_digit {
                push(spans, found, bytes, names::AWS_ACCESS_KEY, start, end);
            }
        }
    }
}

/// Slack tokens: `xoxb-`, `xoxp-`, `xoxa-` and kin, then numeric team and user parts.
fn slack_tokens(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for prefix in [Fixed::SlackXoxb, Fixed::SlackXoxp, Fixed::SlackXoxa, Fixed::SlackXoxr, Fixed::SlackXoxs] {
        let mut runs = RunEnds::new(|b| is_alnum(b) || b == b'-');
        for start in found.starts(Prefix::Fixed(prefix)) {
            if glued(bytes, start, is_alnum) {
                continue;
            }
            let body = start + prefix.text().len();
            let len = runs.len(bytes, body);
            let Some(token) = bytes.get(body..body + len) else {
                continue;
            };
            let mut parts = token.split(|&b| b == b'-');
            let numeric_first = parts.next().is_some_and(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit));
            if len >= 20 && numeric_first && parts.filter(|p| !p.is_empty()).nth(1).is_some() {
                push(spans, found, bytes, names::SLACK_TOKEN, start, body + len);
            }
        }
    }
}

/// Slack incoming-webhook URLs, which post as the workspace without any other credential.
fn slack_webhooks(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    const HOST: &[u8] = Fixed::SlackWebhook.text().as_bytes();
    let id = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    for start in found.starts(Prefix::Fixed(Fixed::SlackWebhook)) {
        let mut at = start + HOST.len();
        let mut ok = true;
        for lead in [b'T', b'B'] {
            let len = run(bytes, at, id);
            ok &= bytes.get(at) == Some(&lead) && len >= 8 && bytes.get(at + len) == Some(&b'/');
            at += len + 1;
        }
        let secret = run(bytes, at, is_alnum);
        if ok && secret >= 20 {
            push(spans, found, bytes, names::SLACK_WEBHOOK, start, at + secret);
        }
    }
}

/// OpenAI `sk-` keys (legacy, `sk-proj-`, `sk-svcacct-`, `sk-admin-`; Anthropic's `sk-ant-` are theirs): long, with upper case, lower case and digits.
fn openai_keys(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for start in found.starts(Prefix::Fixed(Fixed::OpenAi)) {
        let anthropic = bytes.get(start..).is_some_and(|rest| rest.starts_with(b"sk-ant-"));
        if anthropic || glued(bytes, start, |b| is_alnum(b) || b == b'-' || b == b'_') {
            continue;
        }
        let len = run(bytes, start + 3, is_url_b64);
        let Some(body) = bytes.get(start + 3..start + 3 + len) else {
            continue;
        };
        let mixed = body.iter().any(u8::is_ascii_uppercase)
            && body.iter().any(u8::is_ascii_lowercase)
            && body.iter().any(u8::is_ascii_digit);
        if len >= 20 && mixed {
            push(spans, found, bytes, names::OPENAI_KEY, start, start + 3 + len);
        }
    }
}

/// JSON Web Tokens whose header decodes to a JSON object naming its algorithm.
fn jwts(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for start in found.starts(Prefix::Fixed(Fixed::Jwt)) {
        if glued(bytes, start, is_url_b64) {
            continue;
        }
        let header_len = run(bytes, start, is_url_b64);
        let payload_at = start + header_len + 1;
        if bytes.get(start + header_len) != Some(&b'.') {
            continue;
        }
        let payload_len = run(bytes, payload_at, is_url_b64);
        let signature_at = payload_at + payload_len + 1;
        if payload_len == 0 || bytes.get(payload_at + payload_len) != Some(&b'.') {
            continue;
        }
        let signature_len = run(bytes, signature_at, is_url_b64);
        let header = bytes.get(start..start + header_len).and_then(decode_json_object);
        let payload = bytes.get(payload_at..payload_at + payload_len).and_then(decode_json_object);
        let (Some(header), Some(_)) = (header, payload) else {
            continue;
        };
        let Some(alg) = header.get("alg").and_then(serde_json::Value::as_str) else {
            continue;
        };
        // An unsigned token is still a bearer credential; a signed one needs a signature.
        if alg.eq_ignore_ascii_case("none") || signature_len >= 16 {
            spans.push(Span { detector: names::JWT, start, end: signature_at + signature_len });
        }
    }
}

fn decode_json_object(segment: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(segment).ok()?;
    match serde_json::from_slice(&raw).ok()? {
        serde_json::Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Longest distance between an AWS access key ID and its secret access key, in bytes.
pub const AWS_PAIR_BYTES: usize = 256;

/// AWS secret access keys: 40 base64 characters near an access key ID, or
/// named by `aws` and `secret` just before them.
fn aws_secret_keys(text: &str, runs: &TokenRuns, spans: &mut Vec<Span>) {
    let bytes = text.as_bytes();
    let ids: Vec<usize> = spans.iter().filter(|s| s.detector == names::AWS_ACCESS_KEY).map(|s| s.start).collect();
    // Only a run of exactly 40 can be a key.
    for (at, end) in runs.of(bytes, 40, is_b64) {
        let len = end - at;
        let token = bytes.get(at..end).unwrap_or_default();
        let shaped = len == 40
            && token.iter().any(u8::is_ascii_uppercase)
            && token.iter().any(u8::is_ascii_lowercase)
            && entropy(token) >= MIN_ENTROPY_BITS
            && !placeholder(token);
        if shaped {
            let near_id = ids.iter().any(|&id| id.abs_diff(at) <= AWS_PAIR_BYTES);
            let context = context_before(text, at);
            let named = context.contains("aws") && context.contains("secret")
                || context.contains("secret_access_key")
                || context.contains("secretaccesskey");
            if near_id || named {
                spans.push(Span { detector: names::AWS_SECRET_KEY, start: at, end });
            }
        }
    }
}

const fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-')
}

/// A byte of a token or of its base64 padding.
const fn is_token_or_padding(b: u8) -> bool {
    is_token_byte(b) || b == b'='
}

/// [`is_token_or_padding`] of every byte value: the probing pass reads one
/// entry a byte instead of comparing it with five ranges.
static TOKEN_OR_PADDING: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < table.len() {
        table[b] = is_token_or_padding(b as u8);
        b += 1;
    }
    table
};

/// The shortest run of token bytes and `=` a detector reads: the
/// high-entropy detector never judges a token shorter than this with its
/// padding, and the other run readers ask for longer runs.
pub(super) const SHORTEST_TOKEN_RUN: usize = if MIN_ENTROPY_TOKEN_CHARS < super::exempt::MIN_DECODED_TEXT_CHARS {
    MIN_ENTROPY_TOKEN_CHARS
} else {
    super::exempt::MIN_DECODED_TEXT_CHARS
};

/// The maximal runs of token bytes and `=` at least [`SHORTEST_TOKEN_RUN`]
/// long, found once a text by one probing pass ([`long_runs`]).
///
/// The detectors that read long runs of a narrower class (URL-safe base64,
/// base64, digits: each a subset of the token bytes) look only inside these:
/// a run of such a class is a run of token bytes too, and the bytes around
/// a token run are no token bytes, so a run maximal inside a token run is
/// maximal in the text. Text of short words then costs one probing pass
/// instead of one a detector.
pub(super) struct TokenRuns {
    runs: Vec<(usize, usize)>,
}

impl TokenRuns {
    pub(super) fn in_text(bytes: &[u8]) -> TokenRuns {
        TokenRuns { runs: long_runs(bytes, SHORTEST_TOKEN_RUN, |b| TOKEN_OR_PADDING[usize::from(b)]).collect() }
    }

    /// The maximal runs of `class` at least `min` long, in order: what
    /// [`long_runs`] finds in the whole text, for a `class` of token bytes
    /// and `min` of at least [`SHORTEST_TOKEN_RUN`] (a shorter `min` is read
    /// as that).
    pub(super) fn of<'a>(
        &'a self,
        bytes: &'a [u8],
        min: usize,
        class: impl Fn(u8) -> bool + Copy + 'a,
    ) -> impl Iterator<Item = (usize, usize)> + 'a {
        let min = min.max(SHORTEST_TOKEN_RUN);
        self.runs.iter().filter(move |&&(from, to)| to - from >= min).flat_map(move |&(from, to)| {
            long_runs(bytes.get(from..to).unwrap_or_default(), min, class).map(move |(a, b)| (from + a, from + b))
        })
    }
}

/// Prefixes of keys that are public by design.
const PUBLIC_PREFIXES: &[&str] = &["pk_live_", "pk_test_"];

/// Byte ranges of PEM blocks that hold public material (certificates, public keys).
fn public_blocks(text: &str, found: &Found) -> Vec<(usize, usize)> {
    const BEGIN: &str = Fixed::PemBegin.text();
    let mut out = Vec::new();
    for start in found.starts(Prefix::Fixed(Fixed::PemBegin)) {
        let Some(after) = text.get(start + BEGIN.len()..) else {
            continue;
        };
        let Some(label_end) = after.get(..after.len().min(64)).and_then(|h| h.find("-----")) else {
            continue;
        };
        let label = after.get(..label_end).unwrap_or_default();
        if label.contains("PRIVATE") {
            continue;
        }
        let body_at = label_end + 5;
        let Some(rest) = after.get(body_at..) else {
            continue;
        };
        let body_len = rest.find("-----").unwrap_or(rest.len());
        let end_marker = format!("-----END {label}-----");
        if rest.get(body_len..).is_some_and(|r| r.starts_with(&end_marker)) {
            out.push((start, start + BEGIN.len() + body_at + body_len + end_marker.len()));
        }
    }
    out
}

/// Random-looking tokens without a known prefix.
fn high_entropy(text: &str, found: &Found, runs: &TokenRuns, decode: bool, spans: &mut Vec<Span>) {
    let public = public_blocks(text, found);
    // Tokens are judged in order, and what this detector adds lies before the next token:
    // only the spans of the other detectors can overlap one.
    let others = Taken::of(spans);
    let mut lines = LineStarts::default();
    let mut context = Context { public: &public, others: &others, lines: &mut lines };
    for &(from, to) in &runs.runs {
        high_entropy_in(text, from, to, decode, &mut context, spans);
    }
}

/// Where the line of the token at `at` starts, when it matters: only a token
/// just after a `|` can be part of a hashed `known_hosts` entry, the one
/// exemption that reads the line; for any other the token's own start will do.
fn line_start(bytes: &[u8], at: usize, lines: &mut LineStarts) -> usize {
    let after_bar = at.checked_sub(1).and_then(|i| bytes.get(i)) == Some(&b'|');
    if after_bar { lines.of(bytes, at) } else { at }
}

/// What the high-entropy detector consults besides the text.
struct Context<'a> {
    /// PEM public key and certificate blocks.
    public: &'a [(usize, usize)],
    /// The spans of the other detectors.
    others: &'a Taken,
    lines: &'a mut LineStarts,
}

/// The tokens of `text` that start in `from..to`, a run of token bytes and `=`
/// with no token byte just before it, judged in order.
fn high_entropy_in(text: &str, from: usize, to: usize, decode: bool, context: &mut Context<'_>, spans: &mut Vec<Span>) {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < to {
        let len = run(bytes, at, is_token_byte);
        if len == 0 {
            at += 1;
            continue;
        }
        let token_end = at + len;
        // Base64 padding belongs to the token; an `=` followed by more is a separator (`key=value`).
        let padded_end = token_end + run(bytes, token_end, |b| b == b'=');
        let padded_end = if bytes.get(padded_end).is_some_and(|&b| is_token_byte(b)) { token_end } else { padded_end };
        let taken = context.others.overlaps(at, token_end);
        let inside_public = context.public.iter().any(|&(s, e)| s <= at && token_end <= e);
        let public_key =
            PUBLIC_PREFIXES.iter().any(|p| bytes.get(at..).is_some_and(|rest| rest.starts_with(p.as_bytes())));
        // Shorter tokens are never random enough to judge, so the exemptions are not looked up for them.
        let judged = padded_end - at >= MIN_ENTROPY_TOKEN_CHARS.min(super::exempt::MIN_DECODED_TEXT_CHARS);
        if judged
            && !taken
            && !inside_public
            && !public_key
            && !super::exempt::public_token(text, at, padded_end, line_start(bytes, at, context.lines))
        {
            match text.get(at..padded_end).and_then(super::exempt::base64_text) {
                // Base64 of text is judged by what the text holds, never by how random its encoding looks.
                Some(decoded) => {
                    if decode && let Some(inner) = spans_of(&decoded, false).first() {
                        spans.push(Span { detector: inner.detector, start: at, end: padded_end });
                    }
                }
                None => judge_token(text, at, padded_end, spans),
            }
        }
        at = padded_end.max(token_end + 1);
    }
}

/// A token with slashes is judged whole unless it reads like a path or URL,
/// in which case each segment is judged on its own.
fn judge_token(text: &str, start: usize, end: usize, spans: &mut Vec<Span>) {
    let Some(token) = text.get(start..end) else {
        return;
    };
    // A subresource-integrity hash or a base64 digest named as one is a digest, slashes and all.
    let unpadded = token.trim_end_matches('=').len();
    let named_digest = HASH_B64_LENGTHS.contains(&unpadded) && {
        let context = context_before(text, start);
        HASH_WORDS.iter().any(|w| context.contains(w))
    };
    if is_sri_hash(token) || named_digest {
        return;
    }
    if token.contains('/') && path_like(token) {
        let mut seg_start = start;
        for segment in token.split('/') {
            let seg_end = seg_start + segment.len();
            if is_random(text, seg_start, seg_end) {
                spans.push(Span { detector: names::HIGH_ENTROPY, start: seg_start, end: seg_end });
            }
            seg_start = seg_end + 1;
        }
    } else if is_random(text, start, end) {
        spans.push(Span { detector: names::HIGH_ENTROPY, start, end });
    }
}

fn path_like(token: &str) -> bool {
    token.split('/').any(|seg| {
        seg.is_empty()
            || (seg.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
                && class_switches(seg.as_bytes()) <= 2)
    })
}

fn class_of(b: u8) -> u8 {
    if b.is_ascii_uppercase() {
        0
    } else if b.is_ascii_lowercase() {
        1
    } else if b.is_ascii_digit() {
        2
    } else {
        3
    }
}

fn class_switches(token: &[u8]) -> usize {
    token.windows(2).filter(|w| matches!(w, [a, b] if class_of(*a) != class_of(*b))).count()
}

/// Shannon entropy of the bytes of `token`, in bits per byte.
pub fn entropy(token: &[u8]) -> f64 {
    if token.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in token {
        if let Some(c) = counts.get_mut(usize::from(b)) {
            *c += 1;
        }
    }
    let n = token.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * libm::log2(p)).sum()
}

const SECRET_WORDS: &[&str] = &[
    "secret",
    "token",
    "passw",
    "pwd",
    "apikey",
    "api_key",
    "api-key",
    "api key",
    "access key",
    "access_key",
    "auth",
    "bearer",
    "credential",
    "private key",
    "private_key",
    "key=",
    "key:",
    "key\":",
    "key is",
];

const HASH_WORDS: &[&str] = &[
    "sha",
    "md5",
    "hash",
    "digest",
    "checksum",
    "commit",
    "revision",
    "rev ",
    "etag",
    "fingerprint",
    "blake",
    "crc",
    "oid",
    "h1:",
    "integrity",
];

const REPO_PATHS: &[&str] = &["/commit/", "/commits/", "/tree/", "/blob/", "/compare/", "/-/commit/"];

/// Standard digest lengths in hex characters: MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512.
const HASH_HEX_LENGTHS: &[usize] = &[32, 40, 56, 64, 96, 128];
/// The same digests in base64 without padding (SHA-224 is 38).
const HASH_B64_LENGTHS: &[usize] = &[22, 27, 38, 43, 64, 86];

/// Whether `word` occurs in `context` as a credential word: `author` and
/// `authored` (git output) hold `auth` but name no credential; `authorization` does.
fn names_credential(context: &str, word: &str) -> bool {
    context.match_indices(word).any(|(i, _)| {
        let after = context.get(i + word.len()..).unwrap_or_default();
        !(word == "auth" && after.starts_with("or") && !after.starts_with("ori"))
    })
}

fn context_before(text: &str, start: usize) -> String {
    let mut from = start.saturating_sub(CONTEXT_BYTES);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    text.get(from..start).unwrap_or_default().to_ascii_lowercase()
}

fn is_uuid(token: &[u8]) -> bool {
    token.len() == 36
        && token
            .iter()
            .enumerate()
            .all(|(i, &b)| if matches!(i, 8 | 13 | 18 | 23) { b == b'-' } else { b.is_ascii_hexdigit() })
}

fn is_sri_hash(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    ["sha1-", "sha256-", "sha384-", "sha512-"].iter().any(|p| lower.starts_with(p))
}

/// Share of a token's characters that sit in runs of three or more lower-case
/// letters: the words of identifiers such as `SplitByUtf8Boundary`.
pub(super) fn word_fraction(token: &[u8]) -> f64 {
    let mut in_words = 0usize;
    let mut at = 0;
    while at < token.len() {
        let len = run(token, at, |b| b.is_ascii_lowercase());
        if len >= 3 {
            in_words += len;
        }
        at += len.max(1);
    }
    in_words as f64 / token.len().max(1) as f64
}

/// Average length of runs of one character class.
pub(super) fn average_class_run(token: &[u8]) -> f64 {
    let runs = class_switches(token) + 1;
    token.len() as f64 / runs as f64
}

fn is_random(text: &str, start: usize, end: usize) -> bool {
    let Some(token) = text.get(start..end) else {
        return false;
    };
    let bytes = token.trim_end_matches('=').as_bytes();
    if bytes.len() < MIN_ENTROPY_TOKEN_CHARS || placeholder(bytes) || is_uuid(bytes) || is_sri_hash(token) {
        return false;
    }
    let upper = bytes.iter().any(u8::is_ascii_uppercase);
    let lower = bytes.iter().any(u8::is_ascii_lowercase);
    let digit = bytes.iter().any(u8::is_ascii_digit);
    let context = context_before(text, start);
    if upper && lower && digit {
        let named_hash = HASH_B64_LENGTHS.contains(&bytes.len()) && HASH_WORDS.iter().any(|w| context.contains(w));
        return !named_hash
            && entropy(bytes) >= MIN_ENTROPY_BITS
            && average_class_run(bytes) <= MAX_AVERAGE_CLASS_RUN
            && word_fraction(bytes) <= MAX_WORD_FRACTION;
    }
    // Hex and single-case tokens are mostly hashes and IDs: only a secret word
    // right before one makes it a secret, and a hash named as such never is.
    let hex = bytes.iter().all(u8::is_ascii_hexdigit);
    let named_hash = hex
        && (HASH_HEX_LENGTHS.contains(&bytes.len()) && HASH_WORDS.iter().any(|w| context.contains(w))
            || (7..=40).contains(&bytes.len()) && REPO_PATHS.iter().any(|p| context.ends_with(p)));
    let secret_word = SECRET_WORDS.iter().any(|w| names_credential(&context, w));
    secret_word
        && !named_hash
        && digit
        && (upper || lower)
        && bytes.len() >= MIN_CONTEXT_TOKEN_CHARS
        && entropy(bytes) >= MIN_CONTEXT_ENTROPY_BITS
}

#[cfg(test)]
#[path = "scan_bounds_tests.rs"]
mod tests;
