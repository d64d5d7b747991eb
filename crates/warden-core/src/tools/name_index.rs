//! Where each name first appears in a list of named entries (the built-in
//! taxonomy and input schemas), built once when the `tools` section is read,
//! so a call finds its tool's entry with one probe of a [`NameTable`] instead
//! of a name comparison per entry.

use crate::name_table::NameTable;
use crate::prelude::*;

/// The first position of each name in a list, and the positions of the names
/// that hold `*` (tool-name globs), in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameIndex {
    first: NameTable<String, usize>,
    globs: Vec<usize>,
}

impl NameIndex {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> NameIndex {
        let names: Vec<&str> = names.into_iter().collect();
        NameIndex {
            first: NameTable::new(names.iter().enumerate().map(|(i, n)| (n.to_string(), i))),
            globs: names.iter().enumerate().filter(|(_, n)| n.contains('*')).map(|(i, _)| i).collect(),
        }
    }

    /// The position of the first entry named exactly `name`: what a scan
    /// comparing every name finds first.
    #[inline]
    pub fn exact(&self, name: &str) -> Option<usize> {
        self.first.get(name).copied()
    }

    /// The positions of the entries whose name is a glob, in list order.
    pub fn globs(&self) -> &[usize] {
        &self.globs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_found_where_a_scan_of_the_list_finds_it_first() {
        let names = ["Bash", "Read", "bash", "Read", "mcp__*__read", "", "exec", "mcp__*"];
        let index = NameIndex::new(names);
        for probe in ["Bash", "Read", "bash", "BASH", "", "exec", "exe", "execs", "mcp__*__read", "mcp__x__read", "é"]
        {
            assert_eq!(index.exact(probe), names.iter().position(|n| *n == probe), "{probe:?}");
        }
        assert_eq!(index.globs(), [4, 7]);
    }
}
