//! The canonical tool taxonomy: which kind of thing a host's tool does, and
//! which of its arguments carry commands, paths and URLs.
//!
//! Hosts name the same action differently (`Bash`, `exec`, `terminal`,
//! `mcp__shell__run_command`), so each tool name is mapped to a kind first and
//! every later check speaks in kinds. The built-in entries cover Claude Code,
//! OpenClaw, Hermes and the MCP reference servers (`mcp__<server>__<tool>`);
//! configured entries come first and so override them. A name no entry
//! matches is of kind `other`: it is validated, budgeted and remembered, and
//! `derivedPaths` the host resolved for it are still checked.

use crate::prelude::*;
use serde::Serialize;

/// What a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Runs a shell command.
    Shell,
    /// Reads files.
    Read,
    /// Creates or overwrites files.
    Write,
    /// Changes files in place.
    Edit,
    /// Reaches the network.
    Fetch,
    /// Speaks to people.
    Message,
    /// Shares a file, folder or document with someone.
    Share,
    /// Invites someone to an event, a chat, a workspace or an account.
    Invite,
    /// Moves money to a recipient.
    Payment,
    /// Anything else.
    Other,
}

impl Kind {
    pub const ALL: &'static [(&'static str, Kind)] = &[
        ("shell", Kind::Shell),
        ("read", Kind::Read),
        ("write", Kind::Write),
        ("edit", Kind::Edit),
        ("fetch", Kind::Fetch),
        ("message", Kind::Message),
        ("share", Kind::Share),
        ("invite", Kind::Invite),
        ("payment", Kind::Payment),
        ("other", Kind::Other),
    ];

    pub fn as_str(self) -> &'static str {
        Kind::ALL.iter().find(|(_, k)| *k == self).map_or("other", |(n, _)| n)
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.iter().find(|(n, _)| *n == text).map(|(_, k)| *k)
    }

    /// Whether the tool sends something to a destination a call names
    /// (a person, an address, an account): the kinds whose destinations are
    /// classed by where they came from.
    pub fn has_recipients(self) -> bool {
        matches!(self, Kind::Message | Kind::Share | Kind::Invite | Kind::Payment)
    }

    /// Whether the tool changes files.
    pub fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::Edit)
    }
}

/// How one tool (or a family of tools, by glob) is understood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// The host's tool name; `*` matches any run of characters (`mcp__*__read_file`).
    pub tool: String,
    /// What the tool does.
    pub kind: Kind,
    /// Arguments holding a shell command (kind `shell`). Defaults: `command`, `cmd`.
    #[serde(default)]
    pub command_fields: Vec<String>,
    /// Arguments holding a path or a list of paths. Defaults for file kinds: `file_path`, `path`, `paths`, `filePath`, `notebook_path`.
    #[serde(default)]
    pub path_fields: Vec<String>,
    /// Arguments holding a patch whose file headers name paths.
    #[serde(default)]
    pub patch_fields: Vec<String>,
    /// Arguments holding a URL or a list of URLs (kind `fetch`). Defaults: `url`, `urls`.
    #[serde(default)]
    pub url_fields: Vec<String>,
    /// Arguments holding the working directory of a command. Defaults: `workdir`, `cwd`.
    #[serde(default)]
    pub cwd_fields: Vec<String>,
    /// Arguments holding a destination or a list of them: recipients of a
    /// message, people a file is shared with or invited, the payee of a
    /// payment (kinds `message`, `share`, `invite`, `payment`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipient_fields: Vec<String>,
    /// Arguments holding text sent along (a message body, a subject, a
    /// payment reference), whose links are checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body_fields: Vec<String>,
    /// Arguments holding an amount of money (kind `payment`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amount_fields: Vec<String>,
    /// The consent gate's channel of this tool's recipients (such as `email`),
    /// so a recipient with consent on it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The default argument fields of a kind.
pub fn default_fields(kind: Kind) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    match kind {
        Kind::Shell => (strings(&["command", "cmd"]), Vec::new(), Vec::new(), strings(&["workdir", "cwd"])),
        Kind::Read | Kind::Write | Kind::Edit => {
            (Vec::new(), strings(&["file_path", "path", "paths", "filePath", "notebook_path"]), Vec::new(), Vec::new())
        }
        Kind::Fetch => (Vec::new(), Vec::new(), strings(&["url", "urls"]), Vec::new()),
        Kind::Message | Kind::Share | Kind::Invite | Kind::Payment | Kind::Other => {
            (Vec::new(), Vec::new(), Vec::new(), Vec::new())
        }
    }
}

/// The default destination fields of a kind: recipients, bodies, amounts.
pub fn default_destination_fields(kind: Kind) -> (Vec<String>, Vec<String>, Vec<String>) {
    match kind {
        Kind::Message => (
            strings(&["to", "recipient", "recipients", "cc", "bcc", "target"]),
            strings(&["message", "text", "body", "content", "subject"]),
            Vec::new(),
        ),
        Kind::Share => (
            strings(&["to", "recipient", "recipients", "email", "emails", "user", "users", "share_with"]),
            strings(&["message", "note"]),
            Vec::new(),
        ),
        Kind::Invite => (
            strings(&["to", "email", "emails", "user", "users", "invitee", "invitees", "participants", "attendees"]),
            strings(&["message", "description"]),
            Vec::new(),
        ),
        Kind::Payment => (
            strings(&["recipient", "to", "iban", "account", "payee", "beneficiary"]),
            strings(&["subject", "memo", "note", "reference", "description"]),
            strings(&["amount"]),
        ),
        _ => (Vec::new(), Vec::new(), Vec::new()),
    }
}

/// An entry with the default fields of its kind.
pub fn entry(tool: &str, kind: Kind) -> ToolEntry {
    let (command_fields, path_fields, url_fields, cwd_fields) = default_fields(kind);
    let (recipient_fields, body_fields, amount_fields) = default_destination_fields(kind);
    ToolEntry {
        tool: tool.to_string(),
        kind,
        command_fields,
        path_fields,
        patch_fields: Vec::new(),
        url_fields,
        cwd_fields,
        recipient_fields,
        body_fields,
        amount_fields,
        channel: None,
    }
}

/// The built-in taxonomy.
pub fn builtin() -> Vec<ToolEntry> {
    use Kind::*;
    let mut out: Vec<ToolEntry> = [
        // Claude Code
        ("Bash", Shell),
        ("Read", Read),
        ("Write", Write),
        ("Edit", Edit),
        ("MultiEdit", Edit),
        ("NotebookEdit", Edit),
        ("NotebookRead", Read),
        ("Glob", Read),
        ("Grep", Read),
        ("LS", Read),
        ("WebFetch", Fetch),
        ("WebSearch", Fetch),
        // OpenClaw
        ("exec", Shell),
        ("read", Read),
        ("write", Write),
        ("edit", Edit),
        ("message", Message),
        ("web_fetch", Fetch),
        ("web_search", Fetch),
        ("browser", Fetch),
        // Hermes
        ("terminal", Shell),
        ("read_file", Read),
        ("write_file", Write),
        ("search_files", Read),
        ("web_extract", Fetch),
        ("send_message", Message),
        ("execute_code", Other),
        // MCP reference servers
        ("mcp__*__read_file", Read),
        ("mcp__*__read_text_file", Read),
        ("mcp__*__read_media_file", Read),
        ("mcp__*__read_multiple_files", Read),
        ("mcp__*__list_directory*", Read),
        ("mcp__*__directory_tree", Read),
        ("mcp__*__get_file_info", Read),
        ("mcp__*__search_files", Read),
        ("mcp__*__write_file", Write),
        ("mcp__*__create_directory", Write),
        ("mcp__*__edit_file", Edit),
        ("mcp__*__fetch*", Fetch),
        ("mcp__*__run_command", Shell),
        ("mcp__*__execute_command", Shell),
        ("mcp__*__shell", Shell),
        ("mcp__*__bash", Shell),
        ("mcp__*__exec", Shell),
    ]
    .iter()
    .map(|(tool, kind)| entry(tool, *kind))
    .collect();
    // Both ends of a move are written.
    let mut mv = entry("mcp__*__move_file", Kind::Write);
    mv.path_fields = strings(&["source", "destination"]);
    out.push(mv);
    // OpenClaw's patch tool names its files inside the patch.
    let mut patch = entry("apply_patch", Kind::Edit);
    patch.patch_fields = strings(&["input", "patch"]);
    out.push(patch);
    let mut hermes_patch = entry("patch", Kind::Edit);
    hermes_patch.patch_fields = strings(&["patch"]);
    out.push(hermes_patch);
    // OpenClaw's process tool writes its `data` to a running shell.
    let mut process = entry("process", Kind::Shell);
    process.command_fields = strings(&["data"]);
    out.push(process);
    out.extend(destination_tools());
    out
}

/// One built-in entry of a kind with recipients: its tool name, kind,
/// recipient, body and amount fields, and consent channel.
struct Dest {
    tool: &'static str,
    kind: Kind,
    to: &'static [&'static str],
    body: &'static [&'static str],
    amount: &'static [&'static str],
    channel: Option<&'static str>,
}

const fn dest(tool: &'static str, kind: Kind, to: &'static [&'static str], body: &'static [&'static str]) -> Dest {
    Dest { tool, kind, to, body, amount: &[], channel: None }
}

const fn email(tool: &'static str, to: &'static [&'static str], body: &'static [&'static str]) -> Dest {
    Dest { tool, kind: Kind::Message, to, body, amount: &[], channel: Some("email") }
}

const fn pay(tool: &'static str, to: &'static [&'static str], amount: &'static [&'static str]) -> Dest {
    Dest {
        tool,
        kind: Kind::Payment,
        to,
        body: &["subject", "memo", "note", "reference", "description"],
        amount,
        channel: None,
    }
}

/// The email, chat, calendar, file-sharing and banking tools of common
/// assistants and MCP servers, with the argument names those suites use.
/// `message` and `send_message` keep their defaults above.
const DESTINATION_TOOLS: &[Dest] = &[
    // Email: agent tool suites and the Gmail and mail MCP servers.
    email("send_email", &["recipients", "to", "cc", "bcc"], &["subject", "body"]),
    email("reply_to_email", &["recipients", "to", "cc", "bcc"], &["subject", "body"]),
    email("forward_email", &["recipients", "to", "cc", "bcc"], &["subject", "body"]),
    email("draft_email", &["recipients", "to", "cc", "bcc"], &["subject", "body"]),
    email("mcp__*__send_email", &["to", "recipients", "cc", "bcc"], &["subject", "body", "htmlBody"]),
    email("mcp__*__reply_email", &["to", "recipients", "cc", "bcc"], &["subject", "body", "htmlBody"]),
    email("mcp__*__forward_email", &["to", "recipients", "cc", "bcc"], &["subject", "body", "htmlBody"]),
    email("mcp__*__draft_email", &["to", "recipients", "cc", "bcc"], &["subject", "body", "htmlBody"]),
    // Chat: direct and channel messages; the Slack MCP server posts to `channel_id`.
    dest("send_direct_message", Kind::Message, &["recipient"], &["body"]),
    dest("send_channel_message", Kind::Message, &["channel"], &["body"]),
    dest("post_message", Kind::Message, &["channel", "channel_id", "recipient", "to"], &["text", "body", "message"]),
    dest("mcp__*__slack_post_message", Kind::Message, &["channel_id"], &["text"]),
    dest("mcp__*__slack_reply_to_thread", Kind::Message, &["channel_id"], &["text"]),
    dest(
        "mcp__*__send_message",
        Kind::Message,
        &["to", "recipient", "channel", "channel_id", "chat_id"],
        &["text", "body", "message", "content"],
    ),
    // Agent tool suites' web tools: reading a page reaches the network.
    dest("get_webpage", Kind::Fetch, &[], &[]),
    // A page posted to a URL is content sent to wherever the URL points.
    dest("post_webpage", Kind::Message, &["url"], &["content"]),
    // File sharing.
    dest("share_file", Kind::Share, &["email", "emails", "recipient", "recipients", "user"], &["message"]),
    dest(
        "mcp__*__share*",
        Kind::Share,
        &["email", "emails", "emailAddress", "recipient", "recipients", "user"],
        &["message", "emailMessage"],
    ),
    // Invitations: people added to a workspace, a channel or an event.
    dest("invite_user_to_slack", Kind::Invite, &["user_email", "user"], &[]),
    dest("invite_user*", Kind::Invite, &["email", "user_email", "user", "users", "invitee", "invitees"], &["message"]),
    dest("add_user_to_channel", Kind::Invite, &["user"], &[]),
    dest("mcp__*__invite*", Kind::Invite, &["email", "emails", "user", "users", "invitee", "invitees"], &["message"]),
    // An event's participants are invited: the calendar mails them the invitation.
    Dest {
        tool: "create_calendar_event",
        kind: Kind::Invite,
        to: &["participants", "attendees"],
        body: &["title", "description", "location"],
        amount: &[],
        channel: Some("email"),
    },
    Dest {
        tool: "add_calendar_event_participants",
        kind: Kind::Invite,
        to: &["participants", "attendees"],
        body: &[],
        amount: &[],
        channel: Some("email"),
    },
    Dest {
        tool: "mcp__*__create_event",
        kind: Kind::Invite,
        to: &["attendees", "participants"],
        body: &["summary", "title", "description", "location"],
        amount: &[],
        channel: Some("email"),
    },
    // Payments.
    pay("send_money", &["recipient"], &["amount"]),
    pay("schedule_transaction", &["recipient"], &["amount"]),
    pay("update_scheduled_transaction", &["recipient"], &["amount"]),
    pay("mcp__*__send_money", &["recipient", "to", "iban", "account"], &["amount"]),
    pay("mcp__*__transfer*", &["recipient", "to", "iban", "account", "destination", "payee"], &["amount"]),
    pay("mcp__*__create_payment*", &["recipient", "to", "iban", "account", "payee"], &["amount"]),
];

fn destination_tools() -> impl Iterator<Item = ToolEntry> {
    DESTINATION_TOOLS.iter().map(|d| {
        let mut e = entry(d.tool, d.kind);
        if d.kind == Kind::Fetch {
            return e;
        }
        e.recipient_fields = strings(d.to);
        e.body_fields = strings(d.body);
        e.amount_fields = strings(d.amount);
        e.channel = d.channel.map(str::to_string);
        e
    })
}

/// Whether a tool-name glob matches a name: `*` matches any run of characters.
/// Compared byte by byte, which is the same as character by character: what
/// follows a `*` starts with a whole character, which a byte inside another
/// character never equals.
pub fn name_matches(glob: &str, name: &str) -> bool {
    let (g, n) = (glob.as_bytes(), name.as_bytes());
    let (mut gi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match g.get(gi) {
            Some(b'*') => {
                star = Some((gi, ni));
                gi += 1;
            }
            Some(c) if Some(c) == n.get(ni) => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    gi = sg + 1;
                    ni = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    g.get(gi..).unwrap_or(&[]).iter().all(|&c| c == b'*')
}

/// The entry for a tool: configured entries first (exact names before
/// globs), then the built-in ones; `None` means kind `other`.
pub fn classify<'a>(configured: &'a [ToolEntry], builtin: &'a [ToolEntry], name: &str) -> Option<&'a ToolEntry> {
    for list in [configured, builtin] {
        if let Some(e) = list.iter().find(|e| e.tool == name) {
            return Some(e);
        }
        if let Some(e) = list.iter().find(|e| e.tool.contains('*') && name_matches(&e.tool, name)) {
            return Some(e);
        }
    }
    None
}

/// Paths named in a patch: `*** Update File: x`, `+++ b/x` and the like,
/// each once, in the order they first appear. One pass over the lines, with
/// the paths seen kept in an ordered set, so the work grows with the patch's
/// size (times the logarithm of its file count), not with its file count
/// squared.
pub fn patch_paths(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for line in patch.lines() {
        let path = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
            .or_else(|| {
                let rest = line.strip_prefix("+++ ").or_else(|| line.strip_prefix("--- "))?;
                let rest = rest.split('\t').next().unwrap_or(rest).trim();
                if rest == "/dev/null" {
                    return None;
                }
                Some(rest.strip_prefix("a/").or_else(|| rest.strip_prefix("b/")).unwrap_or(rest))
            });
        if let Some(p) = path.map(str::trim).filter(|p| !p.is_empty())
            && seen.insert(p)
        {
            out.push(p.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_tool_names_map_to_kinds() {
        let builtin = builtin();
        let cases: &[(&str, Option<Kind>)] = &[
            ("Bash", Some(Kind::Shell)),
            ("exec", Some(Kind::Shell)),
            ("terminal", Some(Kind::Shell)),
            ("Read", Some(Kind::Read)),
            ("read_file", Some(Kind::Read)),
            ("mcp__fs__read_file", Some(Kind::Read)),
            ("mcp__filesystem__write_file", Some(Kind::Write)),
            ("mcp__fs__move_file", Some(Kind::Write)),
            ("apply_patch", Some(Kind::Edit)),
            ("WebFetch", Some(Kind::Fetch)),
            ("message", Some(Kind::Message)),
            ("send_email", Some(Kind::Message)),
            ("mcp__gmail__send_email", Some(Kind::Message)),
            ("mcp__slack__slack_post_message", Some(Kind::Message)),
            ("send_direct_message", Some(Kind::Message)),
            ("share_file", Some(Kind::Share)),
            ("mcp__gdrive__share_file", Some(Kind::Share)),
            ("invite_user_to_slack", Some(Kind::Invite)),
            ("add_user_to_channel", Some(Kind::Invite)),
            ("create_calendar_event", Some(Kind::Invite)),
            ("send_money", Some(Kind::Payment)),
            ("update_scheduled_transaction", Some(Kind::Payment)),
            ("mcp__bank__transfer_funds", Some(Kind::Payment)),
            ("send_message", Some(Kind::Message)),
            ("mcp__github__create_issue", None),
            ("bash", None),
        ];
        for (name, kind) in cases {
            assert_eq!(classify(&[], &builtin, name).map(|e| e.kind), *kind, "{name}");
        }
    }

    #[test]
    fn destination_tools_name_the_fields_their_suites_use() {
        let builtin = builtin();
        let get = |name: &str| classify(&[], &builtin, name).cloned().unwrap_or_else(|| entry(name, Kind::Other));
        let mail = get("send_email");
        assert_eq!(mail.recipient_fields, ["recipients", "to", "cc", "bcc"]);
        assert_eq!(mail.channel.as_deref(), Some("email"));
        assert_eq!(get("mcp__slack__slack_post_message").recipient_fields, ["channel_id"]);
        assert_eq!(get("share_file").recipient_fields[0], "email");
        assert_eq!(get("invite_user_to_slack").recipient_fields, ["user_email", "user"]);
        assert_eq!(get("create_calendar_event").recipient_fields, ["participants", "attendees"]);
        let money = get("send_money");
        assert_eq!(
            (money.recipient_fields.as_slice(), money.amount_fields.as_slice()),
            (&["recipient".to_string()][..], &["amount".to_string()][..])
        );
        // The pinned chat tools keep the defaults of their kind.
        let (to, body, _) = default_destination_fields(Kind::Message);
        assert_eq!((get("message").recipient_fields, get("message").body_fields), (to.clone(), body.clone()));
        assert_eq!((get("send_message").recipient_fields, get("send_message").body_fields), (to, body));
        assert_eq!(get("send_message").channel, None);
    }

    #[test]
    fn configured_entries_override_builtin_ones() {
        let builtin = builtin();
        let configured = vec![entry("Bash", Kind::Other), entry("mcp__github__*", Kind::Fetch)];
        assert_eq!(classify(&configured, &builtin, "Bash").map(|e| e.kind), Some(Kind::Other));
        assert_eq!(classify(&configured, &builtin, "mcp__github__x").map(|e| e.kind), Some(Kind::Fetch));
    }

    #[test]
    fn tool_name_globs_match_whole_characters() {
        let cases: &[(&str, &str, bool)] = &[
            ("mcp__*__read_file", "mcp__fs__read_file", true),
            ("mcp__*__read_file", "mcp____read_file", true),
            ("mcp__*__read_file", "mcp__fs__read_files", false),
            ("mcp__*__list_directory*", "mcp__fs__list_directory_with_sizes", true),
            ("*", "", true),
            ("", "x", false),
            ("é*", "éa", true),
            ("*é", "aé", true),
            ("*é", "ae", false),
            ("a*ü*b", "aXüYb", true),
            ("a*ü*b", "aXuYb", false),
            ("工具*", "工具_x", true),
            ("*具", "工具", true),
            ("*具", "工", false),
        ];
        for (glob, name, expected) in cases {
            assert_eq!(name_matches(glob, name), *expected, "{glob} vs {name}");
        }
    }

    #[test]
    fn patches_name_their_files() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: ~/.bashrc\n*** End Patch";
        assert_eq!(patch_paths(patch), ["src/a.rs", "~/.bashrc"]);
        let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n--- /dev/null\n+++ b/new.txt";
        assert_eq!(patch_paths(diff), ["x.txt", "new.txt"]);
    }
}
