//! The scanner's rules: one row a rule, with its default severity and what it finds.

use crate::model::Risk;

pub const HIDDEN_TEXT: &str = "scan.hidden-text";
pub const HOMOGLYPH_DOMAIN: &str = "scan.homoglyph-domain";
pub const INVISIBLE_MARKUP: &str = "scan.invisible-markup";
pub const ENCODED_INSTRUCTIONS: &str = "scan.encoded-instructions";
pub const MODEL_INSTRUCTIONS: &str = "scan.model-instructions";
pub const TOOL_SHADOWING: &str = "scan.tool-shadowing";
pub const INSTALL_EXEC: &str = "scan.install-exec";
pub const DANGEROUS_COMMAND: &str = "scan.dangerous-command";
pub const PROTECTED_PATH: &str = "scan.protected-path";
pub const SECRET: &str = "scan.secret";
pub const UNREADABLE: &str = "scan.unreadable";

/// One rule of the scanner.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub name: &'static str,
    /// The severity its findings carry unless the row that found them says otherwise.
    pub severity: Risk,
    /// What it finds.
    pub doc: &'static str,
}

/// Every rule of the scanner.
pub const RULES: &[Rule] = &[
    Rule {
        name: HIDDEN_TEXT,
        severity: Risk::High,
        doc: "Characters a reader does not see: Unicode tag characters (critical; their hidden ASCII is decoded \
              and quoted), zero-width characters between letters of Latin text, bidi embedding, override and \
              isolate controls, and variation selectors that do not follow an emoji. Right-to-left text and the \
              marks it legitimately uses (LRM, RLM, ALM), zero-width joiners inside emoji or in scripts that \
              join letters, and a byte-order mark at the start are not findings.",
    },
    Rule {
        name: HOMOGLYPH_DOMAIN,
        severity: Risk::High,
        doc: "A domain whose label mixes Latin with Cyrillic, Greek or Armenian letters, is written wholly in \
              letters that look like Latin ones (`аpple`), is written in full-width or mathematical letters, or \
              is punycode (`xn--`) that decodes to one of these. A domain wholly in a non-Latin script that does \
              not imitate Latin (`пример.рф`) is not a finding; ASCII look-alikes (`paypa1.com`) are not found.",
    },
    Rule {
        name: INVISIBLE_MARKUP,
        severity: Risk::Low,
        doc: "Markdown and HTML that renders as nothing: HTML comments and reference definitions used as \
              comments (low), links with no text and elements hidden by style or the `hidden` attribute \
              (medium). What they hide is also held to the rules for text that should only describe. \
              `<details>` is not a finding: its text shows when opened, and it is scanned as the body.",
    },
    Rule {
        name: ENCODED_INSTRUCTIONS,
        severity: Risk::High,
        doc: "A base64, base64url or hex blob (or `\\x` escapes) that decodes to text holding instructions for \
              the model or a command the exec gate refuses, decoded again up to twice. Blobs that decode to \
              binary (an image in a data URL) or to harmless text are not findings.",
    },
    Rule {
        name: MODEL_INSTRUCTIONS,
        severity: Risk::High,
        doc: "Instructions aimed at the model: override or ignore earlier instructions, keep something from the \
              user, read a protected path, send data to an address. Anywhere, the clearly malicious ones (override, \
              secrecy, a protected path sent somewhere); in places that should only describe (tool and parameter \
              descriptions, skill front matter, manifests, hidden markup) also a protected path named at all \
              (critical), sending to an address, and markers such as `<IMPORTANT>`.",
    },
    Rule {
        name: TOOL_SHADOWING,
        severity: Risk::High,
        doc: "One tool's description telling the model how to use another tool: another tool of the same list \
              named with a directive (`when send_email is called, ...`), or any tool addressed in general \
              (`before using any other tool`).",
    },
    Rule {
        name: INSTALL_EXEC,
        severity: Risk::Critical,
        doc: "Download-and-execute found by the exec gate's built-in rules, in a script, a fenced shell code \
              block or a `package.json` install script (`preinstall`, `install`, `postinstall`, `prepare`).",
    },
    Rule {
        name: DANGEROUS_COMMAND,
        severity: Risk::High,
        doc: "Any other command the exec gate's built-in rules refuse or ask about (recursive deletes, credential \
              exfiltration, persistence, ...), in a script, a fenced shell code block or a `package.json` script; \
              the exec rule is named in the detail. Commands the parser cannot read are not findings.",
    },
    Rule {
        name: PROTECTED_PATH,
        severity: Risk::High,
        doc: "A command in a script, fenced code block or package script that reads or writes a path the path \
              guard protects by default (`~/.ssh/**`, `~/.aws/credentials`, `**/.env`, ...).",
    },
    Rule {
        name: SECRET,
        severity: Risk::Critical,
        doc: "A secret the DLP floor's deterministic detectors recognise, anywhere (shipped in a skill, leaked \
              into a log). The secret itself is never quoted.",
    },
    Rule {
        name: UNREADABLE,
        severity: Risk::Medium,
        doc: "A document of a structured kind (`package-json`, `mcp-tools`) that does not parse, so its \
              structure was not checked (its text still was), or a script with more commands than are judged \
              (`scan::code::MAX_COMMANDS`).",
    },
];

/// The default severity of `rule`.
pub fn severity(rule: &str) -> Risk {
    RULES.iter().find(|r| r.name == rule).map_or(Risk::High, |r| r.severity)
}
