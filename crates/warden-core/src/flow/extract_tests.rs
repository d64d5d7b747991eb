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
