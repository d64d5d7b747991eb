//! Vendor credential formats, one row a format.
//!
//! Each row is a vendor's documented token shape: a fixed prefix, the
//! alphabet and length of what follows, and, where the vendor builds one in,
//! a check of the token's own structure (GitHub's and npm's CRC32, the
//! numeric user ID inside a Discord bot token). A token that fails its
//! structural check is not named as that vendor's; the generic high-entropy
//! detector still judges it as a random token.
//!
//! Keys that are public by design are not rows: Stripe publishable keys
//! (`pk_live_`, `pk_test_`) and reCAPTCHA site keys are meant to be shipped
//! to browsers. Google `AIza` keys are rows even though Firebase web
//! configurations publish them: whether one is restricted to a referrer
//! cannot be seen from the text, and an unrestricted one bills its owner.

use super::detectors::names;
use super::detectors::{RunEnds, Span, TokenRuns, glued, is_alnum, is_b64, is_url_b64, push, run};
use super::prefixes::{Fixed, Found, Prefix};
use crate::prelude::*;

/// A byte class of a token's body.
type Class = fn(u8) -> bool;

/// One vendor format.
pub struct Row {
    /// The detector name the hit is reported under.
    pub detector: &'static str,
    /// The fixed prefix, case-sensitive.
    pub prefix: &'static str,
    /// The alphabet of the body after the prefix.
    pub body: Class,
    /// Fewest body characters.
    pub min: usize,
    /// Most body characters taken into the span; a longer run is cut here.
    pub max: usize,
    /// A check of the whole body (as long as the run, at most `max`).
    pub check: Check,
}

/// What a row's body must be, past its alphabet and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Varies like a random token ([`random_body`]).
    Varied,
    /// Hex with digits and letters, and varied.
    Hex,
    /// Upper- and lower-case letters, and varied.
    MixedCase,
    /// At least 50 characters.
    Long,
    /// Ends with the base62 CRC32 of the rest ([`crc32_base62_ok`]).
    Crc32,
}

impl Check {
    /// Whether `body` passes the check.
    pub fn passes(self, body: &[u8]) -> bool {
        match self {
            Check::Varied => random_body(body),
            Check::Hex => hex_body(body),
            Check::MixedCase => hf_body(body),
            Check::Long => pypi_body(body),
            Check::Crc32 => crc32_base62_ok(body),
        }
    }
}

fn is_hex_lower(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn is_alnum_under(b: u8) -> bool {
    is_alnum(b) || b == b'_'
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

fn is_gitlab(b: u8) -> bool {
    is_url_b64(b) || b == b'.'
}

fn is_atlassian(b: u8) -> bool {
    is_url_b64(b) || b == b'='
}

/// Fewest character classes (upper, lower, digit) of a body that varies like a random token.
const MIN_CLASSES: usize = 2;
/// Fewest distinct bytes of a body that varies like a random token.
const MIN_DISTINCT_BYTES: usize = 8;

/// A body that varies like a random token: at least [`MIN_CLASSES`]
/// character classes and [`MIN_DISTINCT_BYTES`] distinct bytes.
pub(super) fn random_body(body: &[u8]) -> bool {
    Variety::default().random(body, 0, body.len())
}

/// What [`random_body`] counts, over a window of the text that moves
/// forward: each byte is counted once as it enters and once as it leaves,
/// so the windows of many overlapping bodies cost what one pass over them
/// costs. A window behind the last one is counted afresh.
pub(super) struct Variety {
    /// How many of each byte the window holds.
    counts: [u16; 256],
    /// Byte values the window holds.
    distinct: usize,
    /// Upper-case letters, lower-case letters and digits the window holds.
    classes: [usize; 3],
    from: usize,
    to: usize,
}

impl Default for Variety {
    fn default() -> Variety {
        Variety { counts: [0; 256], distinct: 0, classes: [0; 3], from: 0, to: 0 }
    }
}

impl Variety {
    fn class(b: u8) -> Option<usize> {
        match b {
            b'A'..=b'Z' => Some(0),
            b'a'..=b'z' => Some(1),
            b'0'..=b'9' => Some(2),
            _ => None,
        }
    }

    fn enter(&mut self, b: u8) {
        let Some(count) = self.counts.get_mut(usize::from(b)) else {
            return;
        };
        if *count == 0 {
            self.distinct += 1;
        }
        *count = count.saturating_add(1);
        if let Some(class) = Variety::class(b).and_then(|c| self.classes.get_mut(c)) {
            *class += 1;
        }
    }

    fn leave(&mut self, b: u8) {
        let Some(count) = self.counts.get_mut(usize::from(b)).filter(|c| **c > 0) else {
            return;
        };
        *count -= 1;
        if *count == 0 {
            self.distinct = self.distinct.saturating_sub(1);
        }
        if let Some(class) = Variety::class(b).and_then(|c| self.classes.get_mut(c)) {
            *class = class.saturating_sub(1);
        }
    }

    /// Whether `bytes[from..to]` varies like a random token, as [`random_body`] judges it.
    pub(super) fn random(&mut self, bytes: &[u8], from: usize, to: usize) -> bool {
        let to = to.min(bytes.len());
        if from < self.from || to < self.to || from > self.to {
            *self = Variety { from, to: from, ..Variety::default() };
        }
        while self.to < to {
            if let Some(&b) = bytes.get(self.to) {
                self.enter(b);
            }
            self.to += 1;
        }
        while self.from < from {
            if let Some(&b) = bytes.get(self.from) {
                self.leave(b);
            }
            self.from += 1;
        }
        self.classes.iter().filter(|&&n| n > 0).count() >= MIN_CLASSES && self.distinct >= MIN_DISTINCT_BYTES
    }
}

/// Hex bodies need digits and letters (a run of one is a padding, not a key).
fn hex_body(body: &[u8]) -> bool {
    body.iter().any(u8::is_ascii_digit) && body.iter().any(u8::is_ascii_alphabetic) && random_body(body)
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The last six characters are the base62 CRC32 of the thirty before them,
/// as GitHub (`ghp_` and kin) and npm (`npm_`) build their tokens.
pub fn crc32_base62_ok(body: &[u8]) -> bool {
    let (Some(random), Some(check)) = (body.get(..30), body.get(30..36)) else {
        return false;
    };
    body.len() == 36 && check == base62_crc32(random)
}

/// The six-character base62 CRC32 of `data`, left-padded with `0`.
pub fn base62_crc32(data: &[u8]) -> [u8; 6] {
    let mut n = crc32fast::hash(data);
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62.get((n % 62) as usize).copied().unwrap_or(b'0');
        n /= 62;
    }
    out
}

fn hf_body(body: &[u8]) -> bool {
    body.iter().any(u8::is_ascii_uppercase) && body.iter().any(u8::is_ascii_lowercase) && random_body(body)
}

fn pypi_body(body: &[u8]) -> bool {
    body.len() >= 50
}

use Check::{Crc32, Hex, Long, MixedCase, Varied};

/// Every vendor row, in the order they are tried.
pub const ROWS: &[Row] = &[
    Row { detector: names::GITHUB_TOKEN, prefix: "ghp_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row { detector: names::GITHUB_TOKEN, prefix: "gho_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row { detector: names::GITHUB_TOKEN, prefix: "ghu_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row { detector: names::GITHUB_TOKEN, prefix: "ghs_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row { detector: names::GITHUB_TOKEN, prefix: "ghr_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row {
        detector: names::GITHUB_TOKEN,
        prefix: "github_pat_",
        body: is_alnum_under,
        min: 82,
        max: 255,
        check: Varied,
    },
    Row { detector: names::GITLAB_TOKEN, prefix: "glpat-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "gldt-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glrt-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glsoat-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glptt-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glcbt-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "gloas-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glimt-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glagent-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "glffct-", body: is_gitlab, min: 20, max: 255, check: Varied },
    Row { detector: names::GITLAB_TOKEN, prefix: "GR1348941", body: is_url_b64, min: 20, max: 255, check: Varied },
    Row { detector: names::HUGGINGFACE_TOKEN, prefix: "hf_", body: is_alpha, min: 34, max: 34, check: MixedCase },
    Row { detector: names::HUGGINGFACE_TOKEN, prefix: "api_org_", body: is_alpha, min: 34, max: 34, check: MixedCase },
    Row { detector: names::STRIPE_KEY, prefix: "sk_live_", body: is_alnum, min: 16, max: 255, check: Varied },
    Row { detector: names::STRIPE_KEY, prefix: "sk_test_", body: is_alnum, min: 16, max: 255, check: Varied },
    Row { detector: names::STRIPE_KEY, prefix: "rk_live_", body: is_alnum, min: 16, max: 255, check: Varied },
    Row { detector: names::STRIPE_KEY, prefix: "rk_test_", body: is_alnum, min: 16, max: 255, check: Varied },
    Row { detector: names::STRIPE_KEY, prefix: "whsec_", body: is_alnum, min: 16, max: 255, check: Varied },
    Row { detector: names::TWILIO_KEY, prefix: "SK", body: is_hex_lower, min: 32, max: 32, check: Hex },
    Row { detector: names::TWILIO_KEY, prefix: "AC", body: is_hex_lower, min: 32, max: 32, check: Hex },
    Row {
        detector: names::PYPI_TOKEN,
        prefix: "pypi-AgEIcHlwaS5vcmc",
        body: is_url_b64,
        min: 50,
        max: 400,
        check: Long,
    },
    Row {
        detector: names::PYPI_TOKEN,
        prefix: "pypi-AgENdGVzdC5weXBpLm9yZw",
        body: is_url_b64,
        min: 50,
        max: 400,
        check: Long,
    },
    Row { detector: names::DOCKERHUB_TOKEN, prefix: "dckr_pat_", body: is_url_b64, min: 24, max: 64, check: Varied },
    Row { detector: names::DOCKERHUB_TOKEN, prefix: "dckr_oat_", body: is_url_b64, min: 24, max: 64, check: Varied },
    Row { detector: names::SHOPIFY_TOKEN, prefix: "shpat_", body: is_hex, min: 32, max: 32, check: Hex },
    Row { detector: names::SHOPIFY_TOKEN, prefix: "shpss_", body: is_hex, min: 32, max: 32, check: Hex },
    Row { detector: names::SHOPIFY_TOKEN, prefix: "shpca_", body: is_hex, min: 32, max: 32, check: Hex },
    Row { detector: names::SHOPIFY_TOKEN, prefix: "shppa_", body: is_hex, min: 32, max: 32, check: Hex },
    Row { detector: names::GOOGLE_API_KEY, prefix: "AIza", body: is_url_b64, min: 35, max: 35, check: Varied },
    Row { detector: names::GOOGLE_OAUTH, prefix: "ya29.", body: is_url_b64, min: 30, max: 2048, check: Varied },
    Row { detector: names::GOOGLE_OAUTH, prefix: "GOCSPX-", body: is_url_b64, min: 28, max: 28, check: Varied },
    Row { detector: names::ANTHROPIC_KEY, prefix: "sk-ant-api03-", body: is_url_b64, min: 80, max: 255, check: Varied },
    Row {
        detector: names::ANTHROPIC_KEY,
        prefix: "sk-ant-admin01-",
        body: is_url_b64,
        min: 80,
        max: 255,
        check: Varied,
    },
    Row { detector: names::ANTHROPIC_KEY, prefix: "sk-ant-oat01-", body: is_url_b64, min: 80, max: 255, check: Varied },
    Row { detector: names::NPM_TOKEN, prefix: "npm_", body: is_alnum, min: 36, max: 36, check: Crc32 },
    Row { detector: names::DIGITALOCEAN_TOKEN, prefix: "dop_v1_", body: is_hex_lower, min: 64, max: 64, check: Hex },
    Row { detector: names::DIGITALOCEAN_TOKEN, prefix: "doo_v1_", body: is_hex_lower, min: 64, max: 64, check: Hex },
    Row { detector: names::DIGITALOCEAN_TOKEN, prefix: "dor_v1_", body: is_hex_lower, min: 64, max: 64, check: Hex },
    Row { detector: names::DATABRICKS_TOKEN, prefix: "dapi", body: is_hex_lower, min: 32, max: 32, check: Hex },
    Row { detector: names::MAILGUN_KEY, prefix: "key-", body: is_alnum, min: 32, max: 32, check: Hex },
    Row { detector: names::SQUARE_TOKEN, prefix: "EAAA", body: is_url_b64, min: 60, max: 60, check: Varied },
    Row { detector: names::SQUARE_TOKEN, prefix: "sq0atp-", body: is_url_b64, min: 22, max: 22, check: Varied },
    Row { detector: names::SQUARE_TOKEN, prefix: "sq0csp-", body: is_url_b64, min: 43, max: 43, check: Varied },
    Row { detector: names::HEROKU_KEY, prefix: "HRKU-", body: is_url_b64, min: 40, max: 80, check: Varied },
    Row { detector: names::ATLASSIAN_TOKEN, prefix: "ATATT3", body: is_atlassian, min: 100, max: 400, check: Varied },
    Row { detector: names::ATLASSIAN_TOKEN, prefix: "ATCTT3", body: is_atlassian, min: 100, max: 400, check: Varied },
    Row { detector: names::LINEAR_KEY, prefix: "lin_api_", body: is_alnum, min: 40, max: 40, check: Varied },
    Row { detector: names::LINEAR_KEY, prefix: "lin_oauth_", body: is_hex_lower, min: 64, max: 64, check: Hex },
    Row { detector: names::NOTION_TOKEN, prefix: "secret_", body: is_alnum, min: 43, max: 43, check: Varied },
    Row { detector: names::NOTION_TOKEN, prefix: "ntn_", body: is_alnum, min: 40, max: 50, check: Varied },
    Row { detector: names::SENTRY_TOKEN, prefix: "sntrys_", body: is_atlassian, min: 60, max: 400, check: Varied },
    Row { detector: names::SENTRY_TOKEN, prefix: "sntryu_", body: is_hex_lower, min: 64, max: 64, check: Hex },
    Row { detector: names::GRAFANA_TOKEN, prefix: "glsa_", body: is_alnum_under, min: 40, max: 60, check: Varied },
    Row { detector: names::GRAFANA_TOKEN, prefix: "glc_", body: is_atlassian, min: 32, max: 400, check: Varied },
    Row { detector: names::VAULT_TOKEN, prefix: "hvs.", body: is_url_b64, min: 24, max: 255, check: Varied },
    Row { detector: names::VAULT_TOKEN, prefix: "hvb.", body: is_url_b64, min: 24, max: 255, check: Varied },
    Row { detector: names::NEWRELIC_KEY, prefix: "NRAK-", body: is_alnum, min: 27, max: 27, check: Varied },
    Row { detector: names::POSTMAN_KEY, prefix: "PMAK-", body: is_url_b64, min: 59, max: 80, check: Varied },
    Row {
        detector: names::AGE_SECRET_KEY,
        prefix: "AGE-SECRET-KEY-1",
        body: is_alnum,
        min: 58,
        max: 58,
        check: Varied,
    },
    Row { detector: names::TAILSCALE_KEY, prefix: "tskey-", body: is_url_b64, min: 30, max: 120, check: Varied },
    Row { detector: names::GROQ_KEY, prefix: "gsk_", body: is_alnum, min: 52, max: 52, check: Varied },
    Row { detector: names::XAI_KEY, prefix: "xai-", body: is_alnum, min: 70, max: 90, check: Varied },
    Row { detector: names::REPLICATE_TOKEN, prefix: "r8_", body: is_alnum, min: 37, max: 37, check: Varied },
    Row { detector: names::SUPABASE_TOKEN, prefix: "sbp_", body: is_hex_lower, min: 40, max: 40, check: Hex },
    Row { detector: names::DOPPLER_TOKEN, prefix: "dp.st.", body: is_url_b64, min: 40, max: 60, check: Varied },
    Row { detector: names::PULUMI_TOKEN, prefix: "pul-", body: is_hex_lower, min: 40, max: 40, check: Hex },
    Row { detector: names::FLY_TOKEN, prefix: "fo1_", body: is_url_b64, min: 43, max: 43, check: Varied },
];

/// Every row's tokens in `bytes`.
pub(super) fn scan(bytes: &[u8], found: &Found, runs: &TokenRuns, spans: &mut Vec<Span>) {
    for (i, row) in ROWS.iter().enumerate() {
        let prefix = row.prefix.as_bytes();
        // A prefix made of its own body's alphabet (`glpat-`, `ATATT3`) repeated
        // starts many bodies in one run: the run is measured once, and the
        // varied check counts what enters and leaves its window.
        let mut body_runs = RunEnds::new(row.body);
        // Made at the first body checked: most texts hold no row's prefix.
        let mut window: Option<Variety> = None;
        for start in found.starts(Prefix::Row(i)) {
            if glued(bytes, start, is_url_b64) {
                continue;
            }
            let body_at = start + prefix.len();
            let len = body_runs.len(bytes, body_at);
            if len < row.min {
                continue;
            }
            // A fixed-length body followed by more of its alphabet is some other, longer word.
            if row.min == row.max && len > row.max {
                continue;
            }
            let end = body_at + len.min(row.max);
            let passes = match row.check {
                Check::Varied => window.get_or_insert_with(Variety::default).random(bytes, body_at, end),
                check => bytes.get(body_at..end).is_some_and(|body| check.passes(body)),
            };
            if passes {
                push(spans, found, bytes, row.detector, start, end);
            }
        }
    }
    sendgrid(bytes, found, spans);
    slack_app_tokens(bytes, found, spans);
    mailchimp(bytes, found, spans);
    azure_storage(bytes, found, spans);
    discord(bytes, found, runs, spans);
    telegram(bytes, found, runs, spans);
}

/// SendGrid: `SG.`, 22 URL-safe base64 characters, `.`, 43 more.
fn sendgrid(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for start in found.starts(Prefix::Fixed(Fixed::SendGrid)) {
        let id_at = start + 3;
        let id = run(bytes, id_at, is_url_b64);
        let secret_at = id_at + id + 1;
        let secret = run(bytes, secret_at, is_url_b64);
        if !glued(bytes, start, is_alnum) && id == 22 && bytes.get(id_at + id) == Some(&b'.') && secret == 43 {
            push(spans, found, bytes, names::SENDGRID_KEY, start, secret_at + secret);
        }
    }
}

/// Slack app-level tokens: `xapp-`, a digit, `-`, an upper-case app ID, `-`, digits, `-`, hex.
fn slack_app_tokens(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    let mut runs = RunEnds::new(|b| is_alnum(b) || b == b'-');
    for start in found.starts(Prefix::Fixed(Fixed::SlackApp)) {
        if glued(bytes, start, is_alnum) {
            continue;
        }
        let len = runs.len(bytes, start + 5);
        let Some(token) = bytes.get(start + 5..start + 5 + len) else {
            continue;
        };
        // Exactly four parts; a fifth is not read past.
        let mut parts = token.split(|&b| b == b'-');
        let digits = |p: &[u8]| p.iter().all(u8::is_ascii_digit) && !p.is_empty();
        let ok = match (parts.next(), parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(first), Some(_), Some(third), Some(fourth), None) => {
                digits(first) && digits(third) && fourth.len() >= 32 && fourth.iter().all(|&b| is_hex(b))
            }
            _ => false,
        };
        if ok {
            push(spans, found, bytes, names::SLACK_TOKEN, start, start + 5 + len);
        }
    }
}

/// Mailchimp API keys: 32 lower-case hex characters, `-us` and a data-centre number.
fn mailchimp(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for at in found.starts(Prefix::Fixed(Fixed::MailchimpRegion)) {
        let Some(start) = at.checked_sub(32) else {
            continue;
        };
        let digits = run(bytes, at + 3, |b| b.is_ascii_digit());
        let hex_ok = bytes.get(start..at).is_some_and(|h| h.iter().all(|&b| is_hex_lower(b)) && hex_body(h));
        let ends = !bytes.get(at + 3 + digits).is_some_and(|&b| is_alnum(b));
        if hex_ok && (1..=2).contains(&digits) && ends && !glued(bytes, start, is_alnum) {
            push(spans, found, bytes, names::MAILCHIMP_KEY, start, at + 3 + digits);
        }
    }
}

/// Azure storage account keys (`AccountKey=` and 88 base64 characters) and
/// shared-access signatures (`sig=` in a URL that also names a service version).
fn azure_storage(bytes: &[u8], found: &Found, spans: &mut Vec<Span>) {
    for at in found.starts(Prefix::Fixed(Fixed::AzureAccountKey)) {
        let key_at = at + 11;
        let len = run(bytes, key_at, is_b64);
        let pad = run(bytes, key_at + len, |b| b == b'=');
        if len + pad == 88 && pad <= 2 {
            push(spans, found, bytes, names::AZURE_STORAGE_KEY, key_at, key_at + len + pad);
        }
    }
    for at in found.starts(Prefix::Fixed(Fixed::AzureSig)) {
        if !matches!(at.checked_sub(1).and_then(|i| bytes.get(i)), Some(b'?' | b'&')) {
            continue;
        }
        let sig_at = at + 4;
        let len = run(bytes, sig_at, |b| is_b64(b) || b == b'%' || b == b'=');
        // The query before the signature is read only for a signature that could be one.
        let versioned = || {
            let query = bytes.get(at.saturating_sub(512)..sig_at + len).unwrap_or_default();
            query.windows(3).any(|w| w == b"sv=")
        };
        if len >= 40 && bytes.get(sig_at..sig_at + len).is_some_and(random_body) && versioned() {
            push(spans, found, bytes, names::AZURE_SAS, sig_at, sig_at + len);
        }
    }
}

/// Discord bot tokens: the bot's numeric ID in base64, `.`, six characters, `.`, 27 to 38 more.
fn discord(bytes: &[u8], found: &Found, runs: &TokenRuns, spans: &mut Vec<Span>) {
    use base64::Engine as _;
    // The first part is at least 23 characters.
    for (at, first_end) in runs.of(bytes, 23, is_url_b64) {
        let len = first_end - at;
        if (23..=28).contains(&len)
            && !glued(bytes, at, |b| is_url_b64(b) || b == b'.')
            && bytes.get(first_end) == Some(&b'.')
        {
            let mid = run(bytes, first_end + 1, is_url_b64);
            let last_at = first_end + 1 + mid + 1;
            let last = run(bytes, last_at, is_url_b64);
            let id = bytes
                .get(at..first_end)
                .and_then(|s| base64::engine::general_purpose::STANDARD_NO_PAD.decode(s.trim_ascii_end()).ok());
            let numeric = id.is_some_and(|d| (17..=20).contains(&d.len()) && d.iter().all(u8::is_ascii_digit));
            if numeric && mid == 6 && bytes.get(first_end + 1 + mid) == Some(&b'.') && (27..=38).contains(&last) {
                push(spans, found, bytes, names::DISCORD_TOKEN, at, last_at + last);
            }
        }
    }
}

/// Telegram bot tokens: the bot's numeric ID (8 to 10 digits), `:`, and 35
/// URL-safe base64 characters. They are found from the 35: a run of exactly
/// 35 just after a `:`, then the digits just before it.
pub(super) fn telegram(bytes: &[u8], found: &Found, runs: &TokenRuns, spans: &mut Vec<Span>) {
    for (secret_at, end) in runs.of(bytes, 35, is_url_b64) {
        let Some(colon) = secret_at.checked_sub(1) else {
            continue;
        };
        if end - secret_at != 35 || bytes.get(colon) != Some(&b':') {
            continue;
        }
        // Counted to one past the longest ID, so a longer number is read no further.
        let digits =
            bytes.get(..colon).map_or(0, |id| id.iter().rev().take(11).take_while(|b| b.is_ascii_digit()).count());
        let at = colon - digits;
        if (8..=10).contains(&digits)
            && !glued(bytes, at, is_alnum)
            && bytes.get(secret_at..end).is_some_and(random_body)
        {
            push(spans, found, bytes, names::TELEGRAM_TOKEN, at, end);
        }
    }
}
