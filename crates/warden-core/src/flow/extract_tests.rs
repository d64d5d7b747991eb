use super::*;
use std::string::ToString;

fn values(text: &str) -> Vec<(ValueKind, String)> {
    extract(text, usize::MAX).into_iter().map(|f| (f.kind, f.value)).collect()
}

fn one(kind: ValueKind, value: &str) -> Vec<(ValueKind, String)> {
    std::vec![(kind, value.to_string())]
}

use ValueKind::{Account, Email, Handle, Host, Iban, Phone};

/// Each row: what it shows, the text, the one value expected in it.
const RECALL: &[(&str, &str, ValueKind, &str)] = &[
    ("a plain address", "write to bob@example.com today", Email, "bob@example.com"),
    ("an address in capitals", "Bob@Example.COM", Email, "bob@example.com"),
    ("a mailto link", "<a href=\"mailto:Bob@Example.com?subject=hi\">x</a>", Email, "bob@example.com"),
    ("a percent-encoded mailto", "mailto:bob%40example.com", Email, "bob@example.com"),
    ("a display-name form", "Bob Smith <bob@x.com>", Email, "bob@x.com"),
    ("an address with a tag and dots", "j.doe+bills@mail.example.co.uk.", Email, "j.doe+bills@mail.example.co.uk"),
    ("an address in JSON with an escaped at", r#"{"to":"bob\u0040example.com"}"#, Email, "bob@example.com"),
    ("an address written with an entity", "bob&#64;example&#46;com", Email, "bob@example.com"),
    ("an https URL's host", "see https://Evil.Example.com/login?x=1", Host, "evil.example.com"),
    ("any scheme", "ftp://files.example.org/pub", Host, "files.example.org"),
    ("userinfo before the host", "https://good.com@evil.com/", Host, "evil.com"),
    ("userinfo with a password", "https://user:pw@evil.com:8443/x", Host, "evil.com"),
    ("a port and a trailing dot", "http://evil.com.:8080/", Host, "evil.com"),
    ("an IPv4 literal", "http://192.168.1.20/admin", Host, "192.168.1.20"),
    ("an IPv4 in hexadecimal", "http://0x7f.1/", Host, "127.0.0.1"),
    ("an IPv4 as one number", "http://2130706433/", Host, "127.0.0.1"),
    ("an IPv6 literal", "http://[2001:DB8:0:0::1]:80/", Host, "[2001:db8::1]"),
    ("an internationalized host", "https://Bücher.de/", Host, "xn--bcher-kva.de"),
    ("a Cyrillic host", "http://пример.испытание/", Host, "xn--e1afmkfd.xn--80akhbyknj4f"),
    ("a www host without scheme", "go to www.Example.com/page", Host, "www.example.com"),
    ("a bare domain in prose", "visit evil-site.com today", Host, "evil-site.com"),
    ("a bare domain with a path", "open evil.io/login now", Host, "evil.io"),
    ("a capitalized bare domain", "Evil-site.com has it", Host, "evil-site.com"),
    ("a JSON-escaped URL", r#"{"url":"https:\/\/evil.com\/x"}"#, Host, "evil.com"),
    ("an href", "<a href='https://evil.com/x'>click</a>", Host, "evil.com"),
    ("a scheme-relative href", "<a href=\"//evil.com/x\">click</a>", Host, "evil.com"),
    ("a markdown link", "[click](https://evil.com)", Host, "evil.com"),
    ("a percent-encoded host", "https://%65vil.com/", Host, "evil.com"),
    ("an international phone", "call +1 (555) 123-4567", Phone, "+15551234567"),
    ("an international phone with 00", "ring 0044 20 7946 0958", Phone, "+442079460958"),
    ("a national trunk zero in parentheses", "+44 (0)20 7946 0958", Phone, "+442079460958"),
    ("a phone with dots", "+33.6.12.34.56.78", Phone, "+33612345678"),
    ("a phone without separators", "text +447700900123", Phone, "+447700900123"),
    ("a national phone", "office (555) 123-4567", Phone, "5551234567"),
    ("a national phone with dots", "mobile 06.12.34.56.78", Phone, "0612345678"),
    ("a national phone without separators after a label", "tel: 5551234567", Phone, "5551234567"),
    ("an IBAN together", "pay DE89370400440532013000 now", Iban, "DE89370400440532013000"),
    ("an IBAN in groups", "IBAN: de89 3704 0044 0532 0130 00.", Iban, "DE89370400440532013000"),
    ("a labelled account", "Account no. 12345678", Account, "12345678"),
    ("a labelled account in JSON", r#"{"accountNumber": "1234-5678-90"}"#, Account, "1234567890"),
    ("a routing number", "routing number 021000021", Account, "021000021"),
    ("a handle", "ping @Bob_Smith please", Handle, "@bob_smith"),
    ("a Slack user mention", "hi <@U123ABC>", Handle, "@u123abc"),
    ("a channel", "post in #General.", Handle, "#general"),
];

#[test]
fn each_written_form_is_found_in_its_canonical_form() {
    for (what, text, kind, value) in RECALL {
        assert_eq!(values(text), one(*kind, value), "{what}: {text}");
    }
}

/// Each row: what it shows, a text holding no destination.
const PRECISION: &[(&str, &str)] = &[
    ("prose", "The meeting moved to Tuesday; bring the notes and the budget."),
    ("file names", "see notes.txt, main.rs, report.pdf, README.md, setup.py, run.sh and main.tf"),
    ("code member access", "let n = user.name; row.id = self.app.config.page; obj.link(x); items.map(f)"),
    ("a type path", "use System.IO; Foo.Bar.Baz"),
    ("abbreviations", "e.g. this, i.e. that, a.m. and p.m., U.S.A."),
    ("versions", "version 1.2.3, v10.15.7, 10.0.19041.1"),
    ("a bare IP address", "the server at 192.168.10.20 answered"),
    ("dates", "on 2024-01-15, 15.01.2024, 01/15/2024 and 2024-01-15T10:30:00Z"),
    ("times", "at 10:30:45 and 23:59"),
    ("amounts", "paid $1,234.56, €1.234.567, 1 234 567 € and USD 12,500"),
    ("a year range", "from 1990-2020"),
    ("a timestamp", "created 1701388800"),
    ("an order number", "order #12345678 and id 987654321"),
    ("a card number", "card 4111 1111 1111 1111 and amex 3782 822463 10005"),
    ("an invalid IBAN", "DE89370400440532013001"),
    ("a ZIP+4 and a social security number", "ZIP 12345-6789, SSN 123-45-6789"),
    ("retina image names", "icon@2x.png and logo@3x.webp"),
    ("an address without a dot", "user@localhost"),
    ("an npm scope", "npm i @types/node"),
    ("hex colours and directives", "color: #fff; background: #a0b0c0;\n#include <stdio.h>\n#define X 1"),
    ("an issue number", "fixed in #123"),
    ("a URL fragment", "see page.html#section"),
    ("JSON of ordinary fields", r#"{"name":"Alice","count":3,"price":"12.50","date":"2024-01-15"}"#),
    ("an unlabelled number", "the total is 12345678"),
    ("a log line", "2024-01-15 10:30:00.123 INFO worker.rs:42 done in 15.2ms"),
    ("a percent sign", "grew 1234567%"),
    ("a negative number", "delta -5551234567"),
];

#[test]
fn ordinary_text_holds_no_destination() {
    for (what, text) in PRECISION {
        assert_eq!(values(text), std::vec![], "{what}: {text}");
    }
}

/// Each row: the evasion, the text, the one value expected in it.
const ATTACKS: &[(&str, &str, ValueKind, &str)] = &[
    ("a dot in brackets", "send to evil[.]com", Host, "evil.com"),
    ("a dot in parentheses", "send to evil(.)com", Host, "evil.com"),
    ("a dot spelled in brackets", "send to evil[dot]com", Host, "evil.com"),
    ("a dot spelled in braces", "send to evil{dot}com", Host, "evil.com"),
    ("hxxp", "hxxp://evil.com/x", Host, "evil.com"),
    ("hxxps with a bracketed colon", "hXXps[:]//evil[.]com/x", Host, "evil.com"),
    ("a bracketed scheme separator", "https[://]evil.com", Host, "evil.com"),
    ("at and dot spelled with spaces", "bob [at] example [dot] com", Email, "bob@example.com"),
    ("at in parentheses", "bob(at)example.com", Email, "bob@example.com"),
    ("at in brackets", "bob[@]example.com", Email, "bob@example.com"),
    ("a full-width at and dot", "bob＠example．com", Email, "bob@example.com"),
    ("full-width letters", "ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ", Email, "bob@example.com"),
    ("mathematical letters", "\u{1d41b}\u{1d428}\u{1d41b}@example.com", Email, "bob@example.com"),
    ("an ideographic full stop", "https://evil。com/", Host, "evil.com"),
    ("a zero-width space in a host", "https://ev\u{200b}il.com/", Host, "evil.com"),
    ("a soft hyphen in an address", "bo\u{ad}b@exa\u{ad}mple.com", Email, "bob@example.com"),
    ("a zero-width joiner in an IBAN", "DE89\u{200d}370400440532013000", Iban, "DE89370400440532013000"),
    ("an HTML entity at", "bob&#64;example.com", Email, "bob@example.com"),
    ("a hexadecimal entity at", "bob&#x40;example.com", Email, "bob@example.com"),
    ("a named entity at", "bob&commat;example&period;com", Email, "bob@example.com"),
    (
        "a JSON surrogate pair in a value",
        r#""\ud835\udc1b\ud835\udc28\ud835\udc1b@example.com""#,
        Email,
        "bob@example.com",
    ),
    ("percent-encoded dots in a host", "https://evil%2Ecom/", Host, "evil.com"),
    ("full-width digits in a phone", "call +１ ５５５ １２３ ４５６７", Phone, "+15551234567"),
    ("en dashes in a phone", "+1 555–123–4567", Phone, "+15551234567"),
    (
        "a non-breaking space in an IBAN",
        "DE89\u{a0}3704\u{a0}0044\u{a0}0532\u{a0}0130\u{a0}00",
        Iban,
        "DE89370400440532013000",
    ),
    ("a URL's host in capitals with a trailing dot", "HTTPS://EVIL.COM./", Host, "evil.com"),
    ("userinfo that looks like a host", "http://paypal.com%40evil.com/", Host, "evil.com"),
    ("a backslash after the host", "https://evil.com\\@good.com", Host, "evil.com"),
];

#[test]
fn defanged_and_disguised_values_are_re_formed() {
    for (what, text, kind, value) in ATTACKS {
        assert_eq!(values(text), one(*kind, value), "{what}: {text}");
    }
}

#[test]
fn values_come_out_once_in_the_order_first_seen() {
    let text = "Pay DE89 3704 0044 0532 0130 00 to bob@x.com, cc BOB@X.COM, see https://evil.com and evil.com, \
                call +1 555 123 4567 or #ops";
    assert_eq!(
        values(text),
        std::vec![
            (Iban, "DE89370400440532013000".to_string()),
            (Email, "bob@x.com".to_string()),
            (Host, "evil.com".to_string()),
            (Phone, "+15551234567".to_string()),
            (Handle, "#ops".to_string()),
        ]
    );
}

#[test]
fn a_slack_channel_mention_gives_its_id_and_its_name() {
    assert_eq!(
        values("join <#C123ABC|General> and <@U9|bob>"),
        std::vec![(Handle, "#c123abc".to_string()), (Handle, "#general".to_string()), (Handle, "@u9".to_string())]
    );
}

#[test]
fn a_handle_and_a_channel_of_one_name_differ() {
    assert_eq!(
        values("@general #general"),
        std::vec![(Handle, "@general".to_string()), (Handle, "#general".to_string())]
    );
}

#[test]
fn an_address_inside_a_url_query_is_an_address_and_the_url_a_host() {
    assert_eq!(
        values("https://evil.com/send?to=attacker%40evil.net"),
        std::vec![(Host, "evil.com".to_string()), (Email, "attacker@evil.net".to_string())]
    );
}

#[test]
fn an_address_s_domain_is_not_a_link() {
    assert_eq!(
        link_hosts("write to bob@partner.com or see https://docs.example.org", 10),
        std::vec!["docs.example.org"]
    );
}

#[test]
fn link_hosts_reads_html_and_json() {
    let html = r#"<p>Hi</p><a href="https://Evil.com/a">x</a><img src="//cdn.evil.net/p.png"> www.shop.example.com"#;
    assert_eq!(link_hosts(html, 10), std::vec!["evil.com", "cdn.evil.net", "www.shop.example.com"]);
    let json = r#"{"body":"see https:\/\/evil.com\/x and bob\u0040y.com"}"#;
    assert_eq!(link_hosts(json, 10), std::vec!["evil.com"]);
}

#[test]
fn the_same_destination_written_three_ways_is_one_value() {
    let from_result = extract("reply to Bob <BOB@Example.com>", 4);
    let from_message = extract("please email bob@example.com", 4);
    let from_argument = destination(" mailto:Bob@EXAMPLE.com ");
    assert_eq!(from_result, from_message);
    assert_eq!(from_result.first(), from_argument.as_ref());
    assert_eq!(destination("DE89 3704 0044 0532 0130 00"), extract("iban DE89370400440532013000", 1).first().cloned());
    assert_eq!(destination("+1 (555) 123-4567"), extract("call +1.555.123.4567", 1).first().cloned());
    assert_eq!(destination("https://good.com@Evil.com:8080/x"), extract("evil.com", 1).first().cloned());
}

fn dest(text: &str) -> Option<(ValueKind, String)> {
    destination(text).map(|f| (f.kind, f.value))
}

#[test]
fn a_call_argument_is_read_as_one_destination() {
    let rows: &[(&str, ValueKind, &str)] = &[
        ("Bob@Example.com", Email, "bob@example.com"),
        ("Bob Smith <bob@example.com>", Email, "bob@example.com"),
        ("user@localhost", Email, "user@localhost"),
        ("bob [at] example [dot] com", Email, "bob@example.com"),
        ("https://Evil.com/path", Host, "evil.com"),
        ("evil.com", Host, "evil.com"),
        ("notes.txt", Host, "notes.txt"),
        ("evil.com:8080/x", Host, "evil.com"),
        ("10.0.0.1", Host, "10.0.0.1"),
        ("+44 20 7946 0958", Phone, "+442079460958"),
        ("tel:+15551234567", Phone, "+15551234567"),
        ("0044 20 7946 0958", Phone, "+442079460958"),
        ("5551234567", Phone, "5551234567"),
        ("de89 3704 0044 0532 0130 00", Iban, "DE89370400440532013000"),
        ("12-34-56", Account, "123456"),
        ("@Bob", Handle, "@bob"),
        ("#General", Handle, "#general"),
        ("<@U123ABC>", Handle, "@u123abc"),
        ("<#C1|general>", Handle, "#c1"),
        ("Alice", Handle, "alice"),
        ("  Alice   Smith ", Handle, "alice smith"),
        ("general", Handle, "general"),
        ("ＡＬＩＣＥ", Handle, "alice"),
        ("bob@", Handle, "bob@"),
    ];
    for (text, kind, value) in rows {
        assert_eq!(dest(text), Some((*kind, value.to_string())), "{text}");
    }
    assert_eq!(dest("   "), None);
    assert_eq!(dest("\u{200b}"), None);
}

#[test]
fn destinations_splits_a_list_of_recipients() {
    let all: Vec<String> =
        destinations("bob@x.com; Alice, +1 555 123 4567\n#ops, bob@x.com", 10).into_iter().map(|f| f.value).collect();
    assert_eq!(all, std::vec!["bob@x.com", "alice", "+15551234567", "#ops"]);
    assert_eq!(destinations("a, b, c", 2).len(), 2);
}

#[test]
fn names_are_every_word_and_every_run_of_two_and_three() {
    let all: Vec<String> = names("Send it to Alice Smith, then #general.", 100).into_iter().map(|f| f.value).collect();
    assert_eq!(
        all,
        std::vec![
            "send",
            "it",
            "send it",
            "to",
            "it to",
            "send it to",
            "alice",
            "to alice",
            "it to alice",
            "smith",
            "alice smith",
            "to alice smith",
            "then",
            "general",
            "then general",
        ]
    );
    assert!(names("Alice", 10).iter().all(|f| f.kind == Handle));
}

#[test]
fn names_match_a_plain_recipient_as_an_argument_gives_it() {
    let named: Vec<Found> = names("please message Alice  SMITH about it", 100);
    assert!(named.contains(&destination("alice smith").unwrap_or_else(|| Found { kind: Email, value: String::new() })));
    assert!(named.contains(&destination("Alice").unwrap_or_else(|| Found { kind: Email, value: String::new() })));
}

#[test]
fn names_stop_at_their_limit() {
    assert_eq!(names("a b c d e f", 4).len(), 4);
    assert_eq!(names(&"w ".repeat(10), usize::MAX).len(), 3);
    let many: String = (0..5000).map(|i| format!("w{i} ")).collect();
    assert_eq!(names(&many, usize::MAX).len(), MAX_VALUES);
}

#[test]
fn extract_returns_at_most_the_limit_and_says_so() {
    let text: String = (0..20).map(|i| format!("u{i}@example.com ")).collect();
    let s = scan(&text, 20);
    assert_eq!((s.found.len(), s.truncated), (20, false));
    let s = scan(&text, 19);
    assert_eq!((s.found.len(), s.truncated), (19, true));
    assert_eq!(s.found.last().map(|f| f.value.as_str()), Some("u18@example.com"));
}

#[test]
fn at_most_max_values_come_out_whatever_the_limit() {
    let text: String = (0..MAX_VALUES + 1).map(|i| format!("u{i}@example.com ")).collect();
    let s = scan(&text, usize::MAX);
    assert_eq!((s.found.len(), s.truncated), (MAX_VALUES, true));
    let exact: String = (0..MAX_VALUES).map(|i| format!("u{i}@example.com ")).collect();
    let s = scan(&exact, usize::MAX);
    assert_eq!((s.found.len(), s.truncated), (MAX_VALUES, false));
}

#[test]
fn a_text_past_max_scan_bytes_is_read_up_to_it_and_marked_truncated() {
    let value = " bob@example.com";
    let at_bound = format!("{}{value}", "x".repeat(MAX_SCAN_BYTES - value.len()));
    assert_eq!(at_bound.len(), MAX_SCAN_BYTES);
    let s = scan(&at_bound, 10);
    assert_eq!((s.found.len(), s.truncated), (1, false));
    let past = format!("{at_bound}y");
    let s = scan(&past, 10);
    assert_eq!(s.truncated, true);
    let beyond = format!("{} evil.com", "x".repeat(MAX_SCAN_BYTES));
    assert_eq!(scan(&beyond, 10), Scan { found: std::vec![], truncated: true });
    let multibyte = format!("{}é bob@example.com", "x".repeat(MAX_SCAN_BYTES - 1));
    assert_eq!(scan(&multibyte, 10), Scan { found: std::vec![], truncated: true });
}

#[test]
fn a_value_longer_than_max_value_chars_is_skipped() {
    let host = |n: usize| {
        let core: String = (0..n - 4).map(|i| if i % 61 == 60 { '.' } else { 'b' }).collect();
        format!("{core}.com")
    };
    let local = "a".repeat(MAX_LOCAL_CHARS);
    let fits = format!("{local}@{}", host(MAX_VALUE_CHARS - MAX_LOCAL_CHARS - 1));
    assert_eq!(fits.chars().count(), MAX_VALUE_CHARS);
    assert_eq!(values(&fits), one(Email, &fits));
    let over = format!("{local}@{}", host(MAX_VALUE_CHARS - MAX_LOCAL_CHARS));
    assert_eq!(over.chars().count(), MAX_VALUE_CHARS + 1);
    assert_eq!(values(&over).iter().filter(|(k, _)| *k == Email).count(), 0);
}

#[test]
fn phone_digits_are_bounded_at_seven_and_fifteen() {
    assert_eq!(values("+1 234 567"), one(Phone, "+1234567"));
    assert_eq!(values("+1 234 56"), std::vec![]);
    assert_eq!(values("+123 456 789 012 345"), one(Phone, "+123456789012345"));
    assert_eq!(values("+123 456 789 012 3456"), std::vec![]);
}

#[test]
fn account_digits_are_bounded_at_four_and_thirty_four() {
    assert_eq!(values("account 1234"), one(Account, "1234"));
    assert_eq!(values("account 123"), std::vec![]);
    let max = "1".repeat(34);
    assert_eq!(values(&format!("account {max}")), one(Account, &max));
    assert_eq!(values(&format!("account {max}1")), std::vec![]);
}

/// Texts built to make a scanner go back over what it read.
fn adversarial(n: usize) -> Vec<String> {
    let cycle = |unit: &str| unit.repeat(n / unit.len() + 1).get(..n).unwrap_or_default().to_string();
    std::vec![
        cycle("@"),
        cycle("."),
        cycle("1"),
        cycle("a"),
        cycle("a@"),
        cycle("a."),
        cycle("a@a."),
        cycle("1 "),
        cycle("1-"),
        cycle("+1 "),
        cycle("://"),
        cycle("http://a"),
        cycle("[.]"),
        cycle("&#"),
        cycle("\\u00"),
        cycle("%4"),
        cycle("<@a"),
        cycle("#a"),
        cycle("account "),
        cycle("DE89 "),
        cycle("a.b-"),
        cycle("(1)"),
        format!("{}@", "a".repeat(n)),
        format!("@{}", "a.".repeat(n / 2)),
    ]
}

/// Most steps a scan takes per character of its text: every pass reads each
/// character a bounded number of times.
const STEPS_PER_CHAR: u64 = 400;

#[test]
fn the_scan_is_linear_in_the_length_of_the_text() {
    for small in adversarial(4096) {
        let n = small.chars().count() as u64;
        assert!(work(&small) <= STEPS_PER_CHAR * n + 64, "{:?}: {} steps for {n}", small.get(..12), work(&small));
    }
    for big in adversarial(MAX_SCAN_BYTES) {
        let n = big.chars().count() as u64;
        let steps = work(&big);
        assert!(steps <= STEPS_PER_CHAR * n + 64, "{:?}: {steps} steps for {n}", big.get(..12));
    }
}

#[test]
fn punycode_matches_the_rfc_examples() {
    let code = |s: &str| extract_hosts::punycode(&s.chars().collect::<Vec<char>>());
    assert_eq!(code("bücher").as_deref(), Some("bcher-kva"));
    assert_eq!(code("münchen").as_deref(), Some("mnchen-3ya"));
    assert_eq!(code("пример").as_deref(), Some("e1afmkfd"));
    assert_eq!(code("例え").as_deref(), Some("r8jz45g"));
}

/// This thread's time on a CPU, in nanoseconds (Linux), so the timing does not count waiting for one.
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    stat.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[test]
#[ignore = "prints timings"]
fn timings_of_adversarial_texts() {
    let mut texts = adversarial(MAX_SCAN_BYTES);
    let prose = "Dear Bob, please send the report to alice@example.com or call +1 555 123 4567; see https://docs.example.org/x. ";
    texts.push(prose.repeat(MAX_SCAN_BYTES / prose.len()));
    for big in texts {
        let start = cpu_ns();
        let steps = work(&big);
        let n = big.chars().count() as u64;
        std::println!(
            "{:>12?} {:>6.1} ms cpu {:>5} steps/char",
            big.get(..8),
            (cpu_ns() - start) as f64 / 1e6,
            steps / n
        );
    }
}
