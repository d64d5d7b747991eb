//! Whether a person's message asks the agent to stop, or confirms.
//!
//! A message is read clause by clause (split at sentence and clause
//! punctuation, in Latin and CJK scripts). Quoted text (between double
//! quotes or backticks, and lines starting with `>`) is left out: a person
//! quoting "stop" is not asking for it.
//!
//! A clause asks to stop when, after leading politeness words, it is a stop
//! verb (`stop`, `cancel`, `abort`, ...) followed only by words that point at
//! the agent's own work (`it`, `that`, `everything`, `what you are doing`,
//! `now`), or a fixed phrase (`never mind`, `that's enough`, `hold on`). So
//! `stop the server` and `cancel my subscription` are requests to act, not to
//! stop; `don't stop` and `bus stop` are not stop clauses, because the clause
//! does not start with the verb. Chinese and Japanese clauses ask to stop when,
//! after filler characters, they are exactly one of the stop phrases (`停下`,
//! `别做了`, `取消`, `やめて`); `不要停` (do not stop) and `停车场` (parking lot)
//! are not.

use crate::prelude::*;

/// Words that may open a clause without changing what it asks.
const LEAD: &[&str] = &[
    "please",
    "pls",
    "plz",
    "ok",
    "okay",
    "hey",
    "hi",
    "just",
    "now",
    "so",
    "oh",
    "ah",
    "um",
    "uh",
    "guys",
    "agent",
    "right",
    "seriously",
    "and",
    "then",
    "but",
    "kindly",
    "immediately",
    "no",
    "nope",
    "wait",
    "ugh",
    "wow",
    "whoa",
    "bot",
    "claude",
    "assistant",
    "honestly",
    "actually",
    "i",
    "said",
    "already",
];

/// Verbs that ask the agent to stop when nothing but its own work follows.
const STOP_VERBS: &[&str] = &[
    "stop",
    "stopp",
    "cancel",
    "abort",
    "halt",
    "quit",
    "terminate",
    "cease",
    "arrête",
    "arrete",
    "detente",
    "basta",
    "pause",
];

/// Words that may follow a stop verb and still mean "your work".
const OWN_WORK: &[&str] = &[
    "it",
    "that",
    "this",
    "these",
    "those",
    "everything",
    "all",
    "now",
    "please",
    "right",
    "away",
    "immediately",
    "there",
    "here",
    "the",
    "task",
    "tasks",
    "work",
    "job",
    "jobs",
    "run",
    "what",
    "you",
    "you're",
    "youre",
    "are",
    "were",
    "doing",
    "that's",
    "thats",
    "asap",
    "at",
    "once",
    "thanks",
    "thank",
    "instantly",
    "already",
    "go",
    "going",
    "any",
    "anything",
    "further",
    "more",
    "whatever",
    "working",
    "current",
    "operation",
    "operations",
    "request",
    "agent",
    "execution",
    "process",
    "and",
    "wait",
    "for",
    "me",
    "a",
    "second",
    "moment",
    "sec",
    "minute",
    "with",
    "of",
    "your",
    "plan",
    "changes",
    "change",
    "action",
    "actions",
    "tool",
    "calls",
    "call",
    "commands",
    "command",
    "man",
    "dude",
    "guys",
    "mate",
    "bro",
    "seriously",
    "already",
];

/// Whole clauses that ask to stop.
const STOP_PHRASES: &[&[&str]] = &[
    &["never", "mind"],
    &["nevermind"],
    &["forget", "it"],
    &["forget", "about", "it"],
    &["that's", "enough"],
    &["thats", "enough"],
    &["enough"],
    &["hold", "on"],
    &["hold", "it"],
    &["wait"],
    &["no", "more"],
    &["don't", "do", "that"],
    &["dont", "do", "that"],
    &["do", "not", "do", "that"],
    &["don't", "do", "it"],
    &["dont", "do", "it"],
    &["do", "not", "do", "it"],
    &["don't", "do", "anything"],
    &["do", "not", "do", "anything"],
    &["don't", "continue"],
    &["do", "not", "continue"],
    &["don't", "proceed"],
    &["do", "not", "proceed"],
    &["leave", "it"],
];

/// CJK characters that may surround a stop or confirm phrase.
const CJK_FILLER: &[&str] = &[
    "请",
    "吧",
    "了",
    "啊",
    "呀",
    "哦",
    "嗯",
    "先",
    "快",
    "你",
    "给",
    "我",
    "马",
    "上",
    "立",
    "刻",
    "即",
    "现",
    "在",
    "都",
    "ね",
    "よ",
    "ください",
    "下",
];

/// CJK clauses (after fillers) that ask to stop.
const CJK_STOP: &[&str] = &[
    "停",
    "停止",
    "停止操作",
    "别做",
    "不要做",
    "别弄",
    "别干",
    "不要弄",
    "取消",
    "算",
    "住手",
    "够",
    "别继续",
    "不要继续",
    "中止",
    "终止",
    "暂停",
    "打住",
    "停手",
    "别动",
    "不要动",
    "やめて",
    "止めて",
    "ストップ",
    "中止して",
    "やめ",
];

/// Words of a clause that confirm.
const CONFIRM_PHRASES: &[&[&str]] = &[
    &["yes"],
    &["y"],
    &["yep"],
    &["yeah"],
    &["yup"],
    &["sure"],
    &["confirm"],
    &["confirmed"],
    &["i", "confirm"],
    &["go", "ahead"],
    &["do", "it"],
    &["proceed"],
    &["approved"],
    &["approve"],
    &["lgtm"],
    &["ok"],
    &["okay"],
    &["send", "it"],
    &["ship", "it"],
    &["go"],
    &["yes", "do", "it"],
    &["yes", "go", "ahead"],
];

/// CJK clauses (after fillers) that confirm.
const CJK_CONFIRM: &[&str] =
    &["确认", "好", "好的", "可以", "同意", "是的", "是", "继续", "行", "执行", "はい", "お願いします", "どうぞ"];

/// Words that make a message refuse rather than confirm.
const NEGATIONS: &[&str] = &[
    "no",
    "not",
    "don't",
    "dont",
    "never",
    "nope",
    "wait",
    "stop",
    "cancel",
    "abort",
    "hold",
    "without",
    "isn't",
    "shouldn't",
    "can't",
    "cannot",
    "won't",
];

/// CJK characters that make a message refuse rather than confirm.
const CJK_NEGATIONS: &[char] = &['不', '别', '没', '勿', '停', '否'];

/// Longest message read, in bytes; the rest is ignored.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;

/// Whether the message asks the agent to stop.
pub fn asks_to_stop(message: &str) -> bool {
    clauses(message).iter().any(|c| clause_stops(c))
}

/// Whether the message confirms: some clause is a confirmation, and no clause
/// negates, stops or hesitates.
pub fn confirms(message: &str) -> bool {
    let clauses = clauses(message);
    let confirmed = clauses.iter().any(|c| clause_confirms(c));
    confirmed && !clauses.iter().any(|c| clause_negates(c))
}

fn clause_stops(clause: &str) -> bool {
    if is_cjk_clause(clause) {
        let core = strip_cjk(clause);
        return CJK_STOP.contains(&core.as_str());
    }
    let words = words(clause);
    if STOP_PHRASES.iter().any(|p| words_equal(&words, p)) {
        return true;
    }
    let rest = skip_lead(&words);
    if rest.is_empty() {
        return false;
    }
    if STOP_PHRASES.iter().any(|p| words_equal(rest, p)) {
        return true;
    }
    let Some((verb, tail)) = rest.split_first() else { return false };
    STOP_VERBS.contains(&verb.as_str()) && tail.iter().all(|w| OWN_WORK.contains(&w.as_str()))
}

fn clause_confirms(clause: &str) -> bool {
    if is_cjk_clause(clause) {
        let core = strip_cjk(clause);
        return CJK_CONFIRM.contains(&core.as_str());
    }
    let words = words(clause);
    let trimmed: Vec<String> =
        words.iter().filter(|w| !matches!(w.as_str(), "please" | "pls" | "thanks")).cloned().collect();
    CONFIRM_PHRASES.iter().any(|p| words_equal(&trimmed, p))
}

fn clause_negates(clause: &str) -> bool {
    if clause.chars().any(|c| CJK_NEGATIONS.contains(&c)) {
        return true;
    }
    words(clause).iter().any(|w| NEGATIONS.contains(&w.as_str()) || w.ends_with("n't"))
}

fn words_equal(words: &[String], phrase: &[&str]) -> bool {
    words.len() == phrase.len() && words.iter().zip(phrase).all(|(w, p)| w == p)
}

fn skip_lead(words: &[String]) -> &[String] {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if !LEAD.contains(&w.as_str()) || STOP_VERBS.contains(&w.as_str()) {
            break;
        }
        i += 1;
    }
    words.get(i..).unwrap_or_default()
}

fn is_cjk_clause(clause: &str) -> bool {
    clause.chars().any(is_cjk)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

fn strip_cjk(clause: &str) -> String {
    let kept: String = clause.chars().filter(|c| !c.is_whitespace() && !is_filler_punct(*c)).collect();
    let mut s = kept.as_str();
    // Fillers are stripped from both ends only, so that a filler inside a
    // phrase (`停止`) is kept.
    loop {
        let before = s.len();
        for f in CJK_FILLER {
            s = s.strip_prefix(f).unwrap_or(s);
            s = s.strip_suffix(f).unwrap_or(s);
        }
        if s.len() == before {
            break;
        }
    }
    s.to_string()
}

fn is_filler_punct(c: char) -> bool {
    matches!(c, '~' | '～' | '…' | '-' | '—' | '!' | '！')
}

/// Lowercase words of a clause, with curly apostrophes made straight and
/// punctuation around each word removed.
fn words(clause: &str) -> Vec<String> {
    clause
        .split_whitespace()
        .map(|w| {
            let w = w.replace(['\u{2019}', '\u{2018}', '`'], "'").to_lowercase();
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').trim_matches('\'').to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The message's clauses, quoted text left out.
fn clauses(message: &str) -> Vec<String> {
    let end = floor_char_boundary(message, MAX_MESSAGE_BYTES);
    let text = message.get(..end).unwrap_or_default();
    let mut unquoted = String::with_capacity(text.len());
    for line in text.lines() {
        if line.trim_start().starts_with('>') {
            continue;
        }
        unquoted.push_str(line);
        unquoted.push('\n');
    }
    let unquoted = without_quotes(&unquoted);
    unquoted
        .split(|c: char| {
            matches!(
                c,
                '.' | '!' | '?' | ';' | ',' | ':' | '\n' | '。' | '！' | '？' | '，' | '；' | '、' | '：' | '(' | ')'
            )
        })
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(ToString::to_string)
        .collect()
}

fn without_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            Some(close) if c == close => {
                open = None;
                // A quote ends a clause.
                out.push('\n');
            }
            Some(_) => {}
            None => match c {
                '"' => open = Some('"'),
                '`' => open = Some('`'),
                '“' => open = Some('”'),
                '「' => open = Some('」'),
                _ => out.push(c),
            },
        }
    }
    out
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_that_ask_to_stop_are_found() {
        for m in [
            "stop",
            "STOP!",
            "Stop.",
            "please stop now",
            "stop it",
            "Stop what you are doing",
            "stop everything right now",
            "cancel that",
            "Cancel the task.",
            "abort",
            "ok stop",
            "no, stop!",
            "wait",
            "Never mind.",
            "nevermind, I'll do it myself",
            "That's enough",
            "that\u{2019}s enough",
            "hold on",
            "don't do that",
            "do not continue",
            "Hmm. Stop. I changed my mind",
            "停",
            "停下",
            "请停止",
            "别做了",
            "取消",
            "算了吧",
            "马上停下！",
            "住手",
            "やめて",
            "ストップ",
        ] {
            assert!(asks_to_stop(m), "{m:?} asks to stop");
        }
    }

    #[test]
    fn look_alikes_of_stop_are_not_stop() {
        for m in [
            "don't stop",
            "do not stop until the tests pass",
            "never stop trying",
            "remove the stop words from the index",
            "the bus stop is on Main Street",
            "it is unstoppable",
            "stop the nginx server",
            "cancel my subscription to the newsletter",
            "write a function that cancels pending timers",
            "why did the job abort?",
            "I can't stop thinking about it, can you summarise the paper",
            "add a `stop` command to the CLI",
            "the error says \"stop\" in red",
            "> stop\nthat was the log line, please fix the parser",
            "不要停",
            "别停",
            "停车场在哪里",
            "取消订单的接口怎么写",
            "不停地运行",
            "",
            "   ",
        ] {
            assert!(!asks_to_stop(m), "{m:?} does not ask to stop");
        }
    }

    #[test]
    fn messages_that_confirm_are_found() {
        for m in [
            "yes",
            "Yes!",
            "yes, go ahead",
            "go ahead",
            "confirm",
            "I confirm.",
            "do it",
            "lgtm",
            "确认",
            "好的",
            "可以",
            "はい",
        ] {
            assert!(confirms(m), "{m:?} confirms");
        }
    }

    #[test]
    fn refusals_and_hesitations_do_not_confirm() {
        for m in [
            "no",
            "yes, but don't delete anything",
            "not yet",
            "wait, yes",
            "yes? no.",
            "do it later, not now",
            "I can't confirm that",
            "yesterday I sent it",
            "is it ok to send",
            "不确认",
            "好的，不要发送",
            "别",
            "",
        ] {
            assert!(!confirms(m), "{m:?} does not confirm");
        }
    }

    #[test]
    fn text_past_the_bound_is_not_read() {
        let mut m = "a".repeat(MAX_MESSAGE_BYTES);
        m.push_str(". stop");
        assert!(!asks_to_stop(&m));
        let mut m = "a".repeat(MAX_MESSAGE_BYTES - 8);
        m.push_str(". stop");
        assert!(asks_to_stop(&m));
    }
}
