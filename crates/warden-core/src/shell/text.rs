//! Immutable text shared by reference count.
//!
//! An expanded word is kept three ways ([`super::commands::Arg`]: its value,
//! the word as written and the value as code), which for the commonest word,
//! plain text, are one and the same; words are also copied whole when a
//! wrapper is unwrapped, a `find -exec` repeated or a loop value substituted.
//! [`Text`] makes each of those copies a count increment instead of an
//! allocation, and the empty text allocates nothing.

use crate::prelude::*;
use alloc::rc::Rc;
use core::fmt;
use core::ops::Deref;

/// A shared, immutable string; the empty one holds no allocation.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Option<Rc<str>>);

impl Text {
    /// The text as a `str`.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl core::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        if text.is_empty() { Text(None) } else { Text(Some(Rc::from(text))) }
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Text {
        Text::from(text.as_str())
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text::from(text.as_str())
    }
}

impl From<Text> for String {
    fn from(text: Text) -> String {
        text.as_str().to_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Text;
    use crate::prelude::*;

    #[test]
    fn the_empty_text_holds_no_allocation_however_it_is_made() {
        assert_eq!(Text::from(""), Text::default());
        assert_eq!(Text::from(alloc::string::String::new()).0, None);
        assert_eq!(Text::from("a").as_str(), "a");
    }

    #[test]
    fn texts_compare_by_content_not_by_allocation() {
        assert_eq!(Text::from("rm"), Text::from("rm"));
        assert_ne!(Text::from("rm"), Text::from("rmdir"));
        let rm = Text::from("rm");
        let owned = String::from("rm");
        assert!(rm == "rm" && rm == *"rm" && rm == owned);
    }
}
