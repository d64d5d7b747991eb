//! Who is asking and where, and which scenarios that leaves to check.
//!
//! Only the host's trusted turn metadata counts: message text, display names
//! and configured `name` labels never do. `senderId` matches exactly, because
//! providers issue it and two people can differ only in case; `provider`,
//! `accountId`, `channelId` and agent IDs match case-insensitively, because
//! hosts lowercase them in places. A value that is absent or blank is missing,
//! and missing identity only ever keeps checks on: it never approves anyone,
//! never excludes a channel and never drops a scenario limited to some agents.
//! Thread replies are matched by their channel; the thread ID plays no part.

use super::config::{ChannelRef, Requestor, SafetyConfig, Scenario};
use crate::model::Identity;
use crate::prelude::*;

/// Whether `a` and `b` are equal ignoring case (Unicode lowercase, character by character).
pub fn same_ignoring_case(a: &str, b: &str) -> bool {
    a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
}

/// The value if the host gave one that is not blank.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.trim().is_empty())
}

/// Whether the host passed no provider, account or sender ID.
pub fn is_missing(identity: &Identity) -> bool {
    given(&identity.provider).is_none() || given(&identity.account_id).is_none() || given(&identity.sender_id).is_none()
}

/// Whether the turn's channel is on `list`. A turn without provider, account
/// or channel is in no listed channel.
pub fn in_channels(list: &[ChannelRef], identity: &Identity) -> bool {
    let (Some(provider), Some(account), Some(channel)) =
        (given(&identity.provider), given(&identity.account_id), given(&identity.channel_id))
    else {
        return false;
    };
    list.iter().any(|c| {
        same_ignoring_case(&c.provider, provider)
            && same_ignoring_case(&c.account_id, account)
            && same_ignoring_case(&c.channel_id, channel)
    })
}

/// Whether the requester is on `list`. A turn without provider, account or
/// sender approves no one.
pub fn is_approved(list: &[Requestor], identity: &Identity) -> bool {
    let (Some(provider), Some(account), Some(sender)) =
        (given(&identity.provider), given(&identity.account_id), given(&identity.sender_id))
    else {
        return false;
    };
    list.iter().any(|r| {
        r.sender_id == sender && same_ignoring_case(&r.provider, provider) && same_ignoring_case(&r.account_id, account)
    })
}

/// Whether a scenario limited to `agent_ids` applies to the turn's agent.
/// Without an agent ID it applies: a missing ID must not switch a check off.
pub fn serves_agent(agent_ids: Option<&[String]>, identity: &Identity) -> bool {
    match (agent_ids, given(&identity.agent_id)) {
        (None, _) | (Some(_), None) => true,
        (Some(ids), Some(agent)) => ids.iter().any(|id| same_ignoring_case(id, agent)),
    }
}

/// Why a scenario is not checked for this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The scenario is switched off.
    Disabled,
    /// The scenario is limited to other agents.
    OtherAgent,
    /// The scenario's own exclusions list the channel.
    ExcludedChannel,
    /// The requester is approved for the scenario.
    Approved,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Disabled => "disabled",
            Skip::OtherAgent => "other_agent",
            Skip::ExcludedChannel => "excluded_channel",
            Skip::Approved => "approved_requestor",
        }
    }
}

/// The scenarios left to check for a turn.
#[derive(Debug, Default)]
pub struct Eligible<'c> {
    /// In configuration order.
    pub scenarios: Vec<&'c Scenario>,
    /// The others, with why.
    pub skipped: Vec<(&'c str, Skip)>,
}

/// The scenarios to check for a turn, or `None` when the channel is excluded
/// for every scenario.
pub fn eligible<'c>(config: &'c SafetyConfig, identity: &Identity) -> Option<Eligible<'c>> {
    if in_channels(&config.excluded_channels, identity) {
        return None;
    }
    let mut out = Eligible::default();
    for scenario in &config.scenarios {
        let skip = if !scenario.enabled {
            Some(Skip::Disabled)
        } else if !serves_agent(scenario.agent_ids.as_deref(), identity) {
            Some(Skip::OtherAgent)
        } else if in_channels(&scenario.excluded_channels, identity) {
            Some(Skip::ExcludedChannel)
        } else if is_approved(&scenario.approved_requestors, identity) {
            Some(Skip::Approved)
        } else {
            None
        };
        match skip {
            Some(why) => out.skipped.push((scenario.id.as_str(), why)),
            None => out.scenarios.push(scenario),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requestor(provider: &str, account: &str, sender: &str) -> Requestor {
        Requestor {
            name: Some("Dani".into()),
            provider: provider.into(),
            account_id: account.into(),
            sender_id: sender.into(),
        }
    }

    fn channel(provider: &str, account: &str, id: &str) -> ChannelRef {
        ChannelRef {
            name: Some("#people".into()),
            provider: provider.into(),
            account_id: account.into(),
            channel_id: id.into(),
        }
    }

    fn who(provider: Option<&str>, account: Option<&str>, sender: Option<&str>, channel: Option<&str>) -> Identity {
        Identity {
            provider: provider.map(String::from),
            account_id: account.map(String::from),
            sender_id: sender.map(String::from),
            channel_id: channel.map(String::from),
            thread_id: None,
            agent_id: None,
        }
    }

    #[test]
    fn approval_matches_sender_exactly_and_provider_and_account_in_any_case() {
        let list = [requestor("slack", "Work", "U_DANI")];
        let cases: &[(Identity, bool)] = &[
            (who(Some("slack"), Some("Work"), Some("U_DANI"), None), true),
            (who(Some("SLACK"), Some("work"), Some("U_DANI"), None), true),
            // The sender ID is compared exactly: case matters.
            (who(Some("slack"), Some("work"), Some("u_dani"), None), false),
            (who(Some("slack"), Some("work"), Some("U_DANI "), None), false),
            (who(Some("slack"), Some("work"), Some("U_BOB"), None), false),
            (who(Some("teams"), Some("work"), Some("U_DANI"), None), false),
            (who(Some("slack"), Some("home"), Some("U_DANI"), None), false),
            // Missing identity never approves anyone.
            (who(None, Some("work"), Some("U_DANI"), None), false),
            (who(Some("slack"), None, Some("U_DANI"), None), false),
            (who(Some("slack"), Some("work"), None, None), false),
            (who(Some("slack"), Some("work"), Some("  "), None), false),
            // The configured name is a label: it is not a sender ID.
            (who(Some("slack"), Some("work"), Some("Dani"), None), false),
        ];
        for (identity, expected) in cases {
            assert_eq!(is_approved(&list, identity), *expected, "{identity:?}");
        }
    }

    #[test]
    fn channels_match_in_any_case_and_missing_identity_excludes_nothing() {
        let list = [channel("Slack", "work", "C_Leadership")];
        let cases: &[(Identity, bool)] = &[
            (who(Some("slack"), Some("work"), None, Some("C_Leadership")), true),
            (who(Some("SLACK"), Some("WORK"), Some("U1"), Some("c_leadership")), true),
            (who(Some("slack"), Some("work"), None, Some("C_OTHER")), false),
            (who(Some("slack"), Some("home"), None, Some("C_Leadership")), false),
            (who(None, Some("work"), None, Some("C_Leadership")), false),
            (who(Some("slack"), None, None, Some("C_Leadership")), false),
            (who(Some("slack"), Some("work"), None, None), false),
            (who(Some("slack"), Some("work"), None, Some("")), false),
            // The label is not an ID.
            (who(Some("slack"), Some("work"), None, Some("#people")), false),
        ];
        for (identity, expected) in cases {
            assert_eq!(in_channels(&list, identity), *expected, "{identity:?}");
        }
    }

    #[test]
    fn a_thread_reply_is_matched_by_its_channel() {
        let list = [channel("slack", "work", "C1")];
        let mut identity = who(Some("slack"), Some("work"), Some("U1"), Some("C1"));
        identity.thread_id = Some("1700000000.000100".into());
        assert!(in_channels(&list, &identity));
        identity.channel_id = Some("C2".into());
        identity.thread_id = Some("C1".into());
        assert!(!in_channels(&list, &identity));
    }

    #[test]
    fn agent_limits_apply_in_any_case_and_keep_checks_without_an_agent_id() {
        let ids = ["main".to_string(), "support".to_string()];
        let with_agent = |a: Option<&str>| Identity { agent_id: a.map(String::from), ..Identity::default() };
        type Case<'a> = (Option<&'a [String]>, Option<&'a str>, bool);
        let cases: &[Case] = &[
            (None, Some("anything"), true),
            (None, None, true),
            (Some(&ids), Some("main"), true),
            (Some(&ids), Some("Support"), true),
            (Some(&ids), Some("sales"), false),
            // Without an agent ID the scenario still applies.
            (Some(&ids), None, true),
            (Some(&ids), Some(" "), true),
        ];
        for (list, agent, expected) in cases {
            assert_eq!(serves_agent(*list, &with_agent(*agent)), *expected, "{list:?} {agent:?}");
        }
    }

    #[test]
    fn missing_identity_means_any_of_provider_account_or_sender_is_absent() {
        let cases: &[(Identity, bool)] = &[
            (who(Some("slack"), Some("work"), Some("U1"), None), false),
            (who(None, Some("work"), Some("U1"), Some("C1")), true),
            (who(Some("slack"), None, Some("U1"), Some("C1")), true),
            (who(Some("slack"), Some("work"), None, Some("C1")), true),
            (who(Some("slack"), Some("work"), Some(""), Some("C1")), true),
            (Identity::default(), true),
        ];
        for (identity, expected) in cases {
            assert_eq!(is_missing(identity), *expected, "{identity:?}");
        }
    }

    #[test]
    fn case_folding_is_unicode_aware() {
        assert!(same_ignoring_case("ÄRGER", "ärger"));
        assert!(!same_ignoring_case("abc", "abcd"));
        assert!(same_ignoring_case("", ""));
    }
}
