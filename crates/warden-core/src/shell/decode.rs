//! What programs that print fixed text or decode it would print, computed
//! without running them.
//!
//! Code reaches a shell through its standard input as often as through `-c`:
//! `echo 'rm -rf /' | sh`, `sh <<< '...'`, `printf '\x72\x6d ...' | bash`,
//! `echo cm0gLXJmIC8K | base64 -d | sh`. When every stage before the shell
//! prints text known from the command itself, the analysis computes that text
//! here and judges it as the script the shell would read. Programs modelled:
//! `echo` (with `-n`, `-e`, `-E`), `printf` (`%s`, `%b`, `%c`, `%d`, `%%` and
//! the escapes), `cat` and `tee` of their input, `base64 -d` (also
//! `openssl base64 -d`), `xxd -r -p`, `rev`, and `tr` with literal sets
//! (ranges, escapes, the common classes, `-d`). Anything else prints text
//! that is only known when it runs.
//!
//! Each text is at most [`MAX_DECODED_BYTES`] long; a longer one counts as
//! unknown.

use super::commands::{Arg, Input};
use crate::prelude::*;
use base64::Engine as _;

/// Longest text a stage is computed to print, in bytes (64 KiB, the length
/// of the longest script parsed). Past it the text counts as unknown, so a
/// shell reading it is judged as running code known only at run time.
pub const MAX_DECODED_BYTES: usize = 64 * 1024;

/// Most characters a `tr` set expands to.
pub const MAX_TR_SET: usize = 4096;

/// `text` when it is within [`MAX_DECODED_BYTES`].
pub fn bounded(text: String) -> Option<String> {
    (text.len() <= MAX_DECODED_BYTES).then_some(text)
}

/// What `program` run with `argv` and standard input `input` prints, when
/// that is known from the command alone.
pub fn output(program: &str, argv: &[Arg], input: &Input) -> Option<String> {
    let args: Vec<&str> = argv.iter().skip(1).map(Arg::known).collect::<Option<Vec<_>>>()?;
    let stdin = || match input {
        Input::Nothing => Some(String::new()),
        Input::Text(t) => Some(t.clone()),
        Input::File(_) | Input::Unknown => None,
    };
    let text = match program {
        "echo" => echo(&args)?,
        "printf" => printf(&args)?,
        "true" | "false" | ":" => String::new(),
        "cat" => {
            if args.iter().any(|a| *a != "-" && *a != "-u") {
                return None;
            }
            stdin()?
        }
        "tee" => {
            if args.iter().any(|a| a.starts_with('-') && !matches!(*a, "-a" | "--append" | "-i")) {
                return None;
            }
            stdin()?
        }
        "base64" | "gbase64" => {
            let mut decode = false;
            for a in &args {
                match *a {
                    "-d" | "--decode" | "-D" | "-di" | "-id" => decode = true,
                    "-i" | "--ignore-garbage" | "-" => {}
                    _ => return None,
                }
            }
            if !decode {
                return None;
            }
            base64_decode(&stdin()?)?
        }
        "openssl" => {
            let decode =
                matches!(args.as_slice(), ["base64", "-d"] | ["enc", "-base64", "-d"] | ["enc", "-d", "-base64"]);
            if !decode {
                return None;
            }
            base64_decode(&stdin()?)?
        }
        "xxd" => {
            let mut revert = false;
            let mut plain = false;
            for a in &args {
                match *a {
                    "-r" | "-revert" => revert = true,
                    "-p" | "-ps" | "-plain" | "-postscript" => plain = true,
                    "-rp" | "-pr" | "-r-p" => {
                        revert = true;
                        plain = true;
                    }
                    _ => return None,
                }
            }
            if !(revert && plain) {
                return None;
            }
            hex_decode(&stdin()?)?
        }
        "rev" => {
            if !args.is_empty() {
                return None;
            }
            rev(&stdin()?)
        }
        "tr" => tr(&args, &stdin()?)?,
        _ => return None,
    };
    bounded(text)
}

fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// `echo`, as bash's builtin prints: options only while every word is one.
fn echo(args: &[&str]) -> Option<String> {
    let mut newline = true;
    let mut escapes = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-') else { break };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        i += 1;
    }
    let joined = args.get(i..).unwrap_or(&[]).join(" ");
    let mut out = if escapes {
        let (bytes, stop) = escaped(&joined, true);
        if stop {
            return Some(lossy(bytes));
        }
        lossy(bytes)
    } else {
        joined
    };
    if newline {
        out.push('\n');
    }
    Some(out)
}

/// Backslash escapes resolved as `$'...'` resolves them (bash's `${x@E}`);
/// `None` when a `\c` would end the text, which `$'...'` reads otherwise.
pub(crate) fn ansi_c(text: &str) -> Option<String> {
    let (bytes, stop) = escaped(text, false);
    (!stop).then(|| lossy(bytes))
}

/// Backslash escapes resolved as `printf` (and `echo -e`, `echo_style`)
/// resolve them; the flag says whether `\c` ended the output.
fn escaped(text: &str, echo_style: bool) -> (Vec<u8>, bool) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let digits = |from: usize, radix: u32, max: usize| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max
            && let Some(d) = chars.get(from + n).and_then(|c| c.to_digit(radix))
        {
            value = value.saturating_mul(radix).saturating_add(d);
            n += 1;
        }
        (value, n)
    };
    let push_char = |out: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            push_char(&mut out, c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        match e {
            'a' => out.push(7),
            'b' => out.push(8),
            'e' | 'E' => out.push(0x1b),
            'f' => out.push(0xc),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(0xb),
            '\\' => out.push(b'\\'),
            'c' => return (out, true),
            'x' => {
                let (value, n) = digits(i, 16, 2);
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(value as u8);
                    i += n;
                }
            }
            'u' | 'U' => {
                let (value, n) = digits(i, 16, if e == 'u' { 4 } else { 8 });
                if n == 0 {
                    out.push(b'\\');
                    push_char(&mut out, e);
                } else {
                    push_char(&mut out, char::from_u32(value).unwrap_or('\u{fffd}'));
                    i += n;
                }
            }
            '0' if echo_style => {
                let (value, n) = digits(i, 8, 3);
                out.push((value & 0xff) as u8);
                i += n;
            }
            '0'..='7' if !echo_style => {
                let (value, n) = digits(i - 1, 8, 3);
                out.push((value & 0xff) as u8);
                i += n - 1;
            }
            '"' | '\'' if !echo_style => push_char(&mut out, e),
            other => {
                out.push(b'\\');
                push_char(&mut out, other);
            }
        }
    }
    (out, false)
}

/// `printf FORMAT ARGS`, for the conversions agents use to spell text.
fn printf(args: &[&str]) -> Option<String> {
    let mut args = args;
    if args.first() == Some(&"--") {
        args = args.get(1..).unwrap_or(&[]);
    }
    let (format, mut rest) = args.split_first()?;
    if format.starts_with('-') {
        return None;
    }
    let chars: Vec<char> = format.chars().collect();
    let mut out: Vec<u8> = Vec::new();
    loop {
        let mut used = false;
        let mut literal = String::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            if c != '%' {
                literal.push(c);
                continue;
            }
            let (bytes, stop) = escaped(&core::mem::take(&mut literal), false);
            out.extend(bytes);
            if stop {
                return bounded(lossy(out));
            }
            let conversion = chars.get(i).copied()?;
            i += 1;
            let mut next = || {
                used = true;
                match rest.split_first() {
                    Some((a, r)) => {
                        rest = r;
                        *a
                    }
                    None => "",
                }
            };
            match conversion {
                '%' => out.push(b'%'),
                's' => out.extend_from_slice(next().as_bytes()),
                'b' => {
                    let (bytes, stop) = escaped(next(), true);
                    out.extend(bytes);
                    if stop {
                        return bounded(lossy(out));
                    }
                }
                'c' => {
                    if let Some(c) = next().chars().next() {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
                'd' | 'i' => {
                    let a = next();
                    let a = if a.is_empty() { "0" } else { a };
                    if !a.trim_start_matches(['-', '+']).chars().all(|c| c.is_ascii_digit()) {
                        return None;
                    }
                    out.extend_from_slice(a.as_bytes());
                }
                _ => return None,
            }
            if out.len() > MAX_DECODED_BYTES {
                return None;
            }
        }
        let (bytes, stop) = escaped(&literal, false);
        out.extend(bytes);
        if stop || !used || rest.is_empty() {
            break;
        }
        if out.len() > MAX_DECODED_BYTES {
            return None;
        }
    }
    bounded(lossy(out))
}

fn base64_decode(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT.decode(compact.as_bytes()).ok()?;
    Some(lossy(bytes))
}

fn hex_decode(text: &str) -> Option<String> {
    let digits: Vec<u32> =
        text.chars().filter(|c| !c.is_ascii_whitespace()).map(|c| c.to_digit(16)).collect::<Option<Vec<_>>>()?;
    let bytes: Vec<u8> = digits.chunks(2).map(|p| p.iter().fold(0u32, |v, d| v * 16 + d) as u8).collect();
    Some(lossy(bytes))
}

fn rev(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.extend(body.chars().rev());
        out.push_str(end);
    }
    out
}

/// A `tr` set: ranges, escapes and the common classes.
fn tr_set(spec: &str) -> Option<Vec<char>> {
    let chars: Vec<char> = spec.chars().collect();
    let mut items: Vec<char> = Vec::new();
    let mut i = 0;
    let classes: &[(&str, &str)] = &[
        ("[:lower:]", "abcdefghijklmnopqrstuvwxyz"),
        ("[:upper:]", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        ("[:digit:]", "0123456789"),
        ("[:alpha:]", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
        ("[:alnum:]", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
        ("[:space:]", "\t\n\u{b}\u{c}\r "),
        ("[:blank:]", "\t "),
    ];
    let one = |i: &mut usize| -> Option<char> {
        let c = *chars.get(*i)?;
        *i += 1;
        if c != '\\' {
            return Some(c);
        }
        let Some(&e) = chars.get(*i) else { return Some('\\') };
        *i += 1;
        Some(match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'f' => '\u{c}',
            'v' => '\u{b}',
            'a' => '\u{7}',
            'b' => '\u{8}',
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3
                    && let Some(d) = chars.get(*i).and_then(|c| c.to_digit(8))
                {
                    value = value * 8 + d;
                    *i += 1;
                    n += 1;
                }
                char::from_u32(value)?
            }
            other => other,
        })
    };
    while i < chars.len() {
        let rest: String = chars.get(i..).unwrap_or(&[]).iter().collect();
        if let Some((name, expansion)) = classes.iter().find(|(name, _)| rest.starts_with(name)) {
            items.extend(expansion.chars());
            i += name.chars().count();
        } else if chars.get(i) == Some(&'[') && rest.len() > 2 && (rest.contains("*]") || rest.starts_with("[=")) {
            // `[c*n]` repeats and `[=c=]` equivalence classes are not modelled.
            return None;
        } else {
            let start = one(&mut i)?;
            if chars.get(i) == Some(&'-') && i + 1 < chars.len() {
                i += 1;
                let end = one(&mut i)?;
                if end < start {
                    return None;
                }
                let (s, e) = (u32::from(start), u32::from(end));
                if (e - s) as usize > MAX_TR_SET {
                    return None;
                }
                items.extend((s..=e).filter_map(char::from_u32));
            } else {
                items.push(start);
            }
        }
        if items.len() > MAX_TR_SET {
            return None;
        }
    }
    Some(items)
}

fn tr(args: &[&str], input: &str) -> Option<String> {
    match args {
        ["-d", set] | ["--delete", set] => {
            let set = tr_set(set)?;
            Some(input.chars().filter(|c| !set.contains(c)).collect())
        }
        [from, to] if !from.starts_with('-') => {
            let from = tr_set(from)?;
            let to = tr_set(to)?;
            let last = *to.last()?;
            let mut map: BTreeMap<char, char> = BTreeMap::new();
            for (k, c) in from.iter().enumerate() {
                map.insert(*c, to.get(k).copied().unwrap_or(last));
            }
            Some(input.chars().map(|c| map.get(&c).copied().unwrap_or(c)).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(program: &str, args: &[&str], input: Option<&str>) -> Option<String> {
        let mut argv = vec![Arg::fixed(program)];
        argv.extend(args.iter().map(|a| Arg::fixed(a)));
        let input = input.map_or(Input::Nothing, |t| Input::Text(t.to_string()));
        output(program, &argv, &input)
    }

    #[test]
    fn fixed_text_printers_print_what_bash_would() {
        assert_eq!(run("echo", &["rm", "-rf", "/"], None).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("echo", &["-n", "ls"], None).as_deref(), Some("ls"));
        assert_eq!(run("echo", &["-e", "\\x72\\x6d -rf /"], None).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("echo", &["\\x72m"], None).as_deref(), Some("\\x72m\n"));
        assert_eq!(run("printf", &["\\x72\\x6d -rf /"], None).as_deref(), Some("rm -rf /"));
        assert_eq!(run("printf", &["\\162m -rf %s\\n", "/"], None).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("printf", &["%s\\n", "a", "b"], None).as_deref(), Some("a\nb\n"));
        assert_eq!(run("printf", &["%b", "\\0162m"], None).as_deref(), Some("rm"));
        assert_eq!(run("printf", &["%5s", "x"], None), None);
        assert_eq!(run("cat", &[], Some("rm -rf /\n")).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("cat", &["notes.txt"], Some("x")), None);
    }

    #[test]
    fn decoders_decode_literal_input_and_refuse_what_they_cannot_model() {
        assert_eq!(run("base64", &["-d"], Some("cm0gLXJmIC8K\n")).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("base64", &["--decode"], Some("cm0gLXJmIC8")).as_deref(), Some("rm -rf /"));
        assert_eq!(run("base64", &["-d"], Some("not base64!")), None);
        assert_eq!(run("base64", &[], Some("x")), None);
        assert_eq!(run("openssl", &["base64", "-d"], Some("cm0gLXJmIC8K")).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("xxd", &["-r", "-p"], Some("726d202d7266202f0a")).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("xxd", &["-r"], Some("726d")), None);
        assert_eq!(run("rev", &[], Some("/ fr- mr\n")).as_deref(), Some("rm -rf /\n"));
        assert_eq!(run("tr", &["A-Za-z", "N-ZA-Mn-za-m"], Some("ez -es /")).as_deref(), Some("rm -rf /"));
        assert_eq!(run("tr", &["-d", "#"], Some("r#m -rf /")).as_deref(), Some("rm -rf /"));
        assert_eq!(run("tr", &["[:upper:]", "[:lower:]"], Some("RM -RF /")).as_deref(), Some("rm -rf /"));
        assert_eq!(run("tr", &["-s", " "], Some("a  b")), None);
    }

    #[test]
    fn decoded_text_is_bounded_exactly_at_its_limit() {
        let at = "a".repeat(MAX_DECODED_BYTES - 1);
        assert_eq!(run("echo", &[&at], None).map(|t| t.len()), Some(MAX_DECODED_BYTES));
        let past = "a".repeat(MAX_DECODED_BYTES);
        assert_eq!(run("echo", &[&past], None), None);
        let set = format!("\\0-{}", char::from_u32(MAX_TR_SET as u32 + 1).unwrap_or('x'));
        assert_eq!(run("tr", &[&set, "x"], Some("a")), None);
    }
}
