//! What the analyser knows about a program's name, looked up once.
//!
//! The analyser asks of every program it records whether it is a wrapper, a
//! shell, a downloader, a program whose operands are not read, and so on.
//! Each answer lives in its own table ([`super::wrappers::WRAPPERS`],
//! [`super::commands::SHELLS`], ...); scanning them one by one cost a string
//! comparison per row per invocation. [`Class::of`] answers all of them with
//! one probe of a [`NameTable`] built, on first use, from those same tables,
//! so a table stays the one statement of what it holds.

use super::{commands, metadata, secrets, wrappers};
use crate::name_table::NameTable;
use hashbrown::HashMap;
use once_cell::race::OnceBox;

/// The tables a program's name is in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Class {
    bits: u8,
    /// Index of its row in [`wrappers::WRAPPERS`] plus one; 0 when it is not a wrapper.
    wrapper: u16,
    /// The rows of [`secrets::SECRET_COMMANDS`] from its first to its last, as a range.
    secret_rows: (u16, u16),
}

/// One of the tables a [`Class`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// [`commands::SHELLS`].
    Shell = 1,
    /// [`commands::NOT_READERS`].
    NotReader = 2,
    /// [`commands::WRITES_WITHOUT_READING`].
    WritesWithoutReading = 4,
    /// [`commands::DOWNLOADERS`].
    Downloader = 8,
    /// [`secrets::DUMPS`] or a program of [`secrets::SECRET_COMMANDS`].
    SecretOutput = 16,
    /// [`metadata::METADATA_ONLY`].
    MetadataOnly = 32,
    /// [`secrets::DUMPS`].
    Dump = 64,
    /// [`commands::ANALYSED_BUILTINS`].
    Builtin = 128,
}

static CLASSES: OnceBox<NameTable<&'static str, Class>> = OnceBox::new();

/// The set of the ASCII bytes `words` start with, a bit each (a word
/// starting with another byte, or empty, adds nothing).
pub const fn first_bytes(words: &[&str]) -> u128 {
    let mut set = 0u128;
    let mut i = 0;
    while i < words.len() {
        if let Some(&b) = words[i].as_bytes().first()
            && b < 128
        {
            set |= 1 << b;
        }
        i += 1;
    }
    set
}

/// Whether the ASCII byte `b` is in a set made by [`first_bytes`]. Read as
/// two 64-bit halves: a shift of a `u128` by a variable amount is a call of
/// its own on `wasm32`.
#[inline]
pub fn in_first_bytes(set: u128, b: u32) -> bool {
    match b {
        0..64 => (set as u64) >> b & 1 != 0,
        64..128 => ((set >> 64) as u64) >> (b - 64) & 1 != 0,
        _ => false,
    }
}

/// A table of names with a filter of its rows: each row sets one bit of 256,
/// picked by its length and its first and last bytes, so a name whose bit
/// is clear is answered with one test, not a scan of the rows (the tables
/// the exec gate asks of every program; a program's name rarely shares its
/// length and both end bytes with a row it is not).
#[derive(Debug, Clone, Copy)]
pub struct Names {
    rows: &'static [&'static str],
    bits: [u64; 4],
}

/// The bit of a [`Names`] filter that `name` picks.
const fn filter_bit(name: &[u8]) -> usize {
    let (first, last) = match name {
        [] => (0, 0),
        [first, .., last] => (*first, *last),
        [only] => (*only, *only),
    };
    filter_bit_of(first, last, name.len())
}

/// The bit of a name of `len` bytes from `first` to `last`.
#[inline(always)]
const fn filter_bit_of(first: u8, last: u8, len: usize) -> usize {
    // The three, side by side, times a golden-ratio constant: the top byte mixes them all.
    let key = first as u32 | (last as u32) << 8 | (len as u32) << 16;
    (key.wrapping_mul(0x9e37_79b1) >> 24) as usize
}

impl Names {
    pub const fn new(rows: &'static [&'static str]) -> Names {
        let mut bits = [0u64; 4];
        let mut i = 0;
        while i < rows.len() {
            let bit = filter_bit(rows[i].as_bytes());
            bits[bit / 64] |= 1 << (bit % 64);
            i += 1;
        }
        Names { rows, bits }
    }

    /// Whether a row is `name`: what [`listed`] answers of the rows.
    #[inline(always)]
    pub fn has(&self, name: &str) -> bool {
        self.has_bit(filter_bit(name.as_bytes())) && listed(self.rows, name)
    }

    /// Whether a row may be a name of `len` bytes from `first` to `last`:
    /// `false` says none is.
    #[inline(always)]
    pub fn may_hold(&self, first: u8, last: u8, len: usize) -> bool {
        self.has_bit(filter_bit_of(first, last, len))
    }

    #[inline(always)]
    fn has_bit(&self, bit: usize) -> bool {
        self.bits.get(bit / 64).is_some_and(|word| word >> (bit % 64) & 1 != 0)
    }

    /// The rows, in order.
    pub fn rows(&self) -> &'static [&'static str] {
        self.rows
    }
}

/// Whether `table` holds `name`: `contains`, but a row's first byte is
/// compared before the rest, so rows of the name's length that start with
/// another letter cost no string comparison (under wasmtime each is a call
/// of its own).
pub fn listed(table: &[&str], name: &str) -> bool {
    let first = name.as_bytes().first();
    table.iter().any(|row| row.len() == name.len() && row.as_bytes().first() == first && *row == name)
}

impl Class {
    /// The tables `program` (a name without its directory) is in.
    pub fn of(program: &str) -> Class {
        CLASSES.get_or_init(|| alloc::boxed::Box::new(build())).get(program).copied().unwrap_or_default()
    }

    /// Whether the name is in `table`.
    pub fn is(self, table: Table) -> bool {
        self.bits & table as u8 != 0
    }

    /// The rows of [`secrets::SECRET_COMMANDS`] from the first of this name to
    /// the last: all of them, and only them when they are next to each other.
    pub fn secret_commands(self) -> &'static [secrets::SecretCommand] {
        let (from, to) = self.secret_rows;
        secrets::SECRET_COMMANDS.get(usize::from(from)..usize::from(to)).unwrap_or_default()
    }

    /// The wrapper of this name: the first row of [`wrappers::WRAPPERS`] with it.
    pub fn wrapper(self) -> Option<&'static wrappers::Wrapper> {
        usize::from(self.wrapper).checked_sub(1).and_then(|i| wrappers::WRAPPERS.get(i))
    }
}

fn build() -> NameTable<&'static str, Class> {
    let mut map: HashMap<&'static str, Class> = HashMap::new();
    for (i, row) in wrappers::WRAPPERS.iter().enumerate() {
        let class = map.entry(row.name).or_default();
        // The first row of a name is the one a scan would find.
        if class.wrapper == 0 {
            class.wrapper = u16::try_from(i + 1).unwrap_or(0);
        }
    }
    let tables: [(&[&'static str], Table); 8] = [
        (secrets::DUMPS, Table::Dump),
        (commands::SHELLS, Table::Shell),
        (commands::NOT_READERS, Table::NotReader),
        (commands::WRITES_WITHOUT_READING, Table::WritesWithoutReading),
        (commands::DOWNLOADERS, Table::Downloader),
        (secrets::DUMPS, Table::SecretOutput),
        (metadata::METADATA_ONLY, Table::MetadataOnly),
        (commands::ANALYSED_BUILTINS, Table::Builtin),
    ];
    for (names, table) in tables {
        for name in names {
            map.entry(name).or_default().bits |= table as u8;
        }
    }
    for (i, (name, ..)) in secrets::SECRET_COMMANDS.iter().enumerate() {
        let class = map.entry(name).or_default();
        class.bits |= Table::SecretOutput as u8;
        let (Ok(at), Ok(next)) = (u16::try_from(i), u16::try_from(i + 1)) else { continue };
        class.secret_rows = if class.secret_rows.1 == 0 { (at, next) } else { (class.secret_rows.0, next) };
    }
    NameTable::new(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    /// Every name any table holds, and names near them that none holds.
    fn names() -> Vec<String> {
        let mut out: Vec<String> = wrappers::WRAPPERS.iter().map(|w| w.name.to_string()).collect();
        for table in [
            commands::SHELLS,
            commands::NOT_READERS,
            commands::WRITES_WITHOUT_READING,
            commands::DOWNLOADERS,
            secrets::DUMPS,
            metadata::METADATA_ONLY,
            commands::ANALYSED_BUILTINS,
        ] {
            out.extend(table.iter().map(|n| n.to_string()));
        }
        out.extend(secrets::SECRET_COMMANDS.iter().map(|(n, ..)| n.to_string()));
        let near: Vec<String> = out
            .iter()
            .flat_map(|n| [format!("{n}x"), format!("x{n}"), n.to_ascii_uppercase(), n[..n.len() - 1].to_string()])
            .collect();
        out.extend(near);
        out.extend(["", "git", "cargo", "tail", "/bin/sh", "sh ", " sh", "bash\0"].map(String::from));
        out
    }

    #[test]
    fn every_name_is_in_exactly_the_tables_a_scan_of_them_finds() {
        for name in names() {
            let class = Class::of(&name);
            let n = name.as_str();
            let expected = [
                (Table::Shell, commands::SHELLS.contains(&n)),
                (Table::NotReader, commands::NOT_READERS.contains(&n)),
                (Table::WritesWithoutReading, commands::WRITES_WITHOUT_READING.contains(&n)),
                (Table::Downloader, commands::DOWNLOADERS.contains(&n)),
                (
                    Table::SecretOutput,
                    secrets::DUMPS.contains(&n) || secrets::SECRET_COMMANDS.iter().any(|(p, ..)| *p == n),
                ),
                (Table::MetadataOnly, metadata::METADATA_ONLY.contains(&n)),
                (Table::Dump, secrets::DUMPS.contains(&n)),
                (Table::Builtin, commands::ANALYSED_BUILTINS.contains(&n)),
            ];
            for (table, scanned) in expected {
                assert_eq!(class.is(table), scanned, "`{name}` in {table:?}");
            }
            let rows: Vec<String> =
                secrets::SECRET_COMMANDS.iter().filter(|r| r.0 == n).map(|r| format!("{r:?}")).collect();
            let found: Vec<String> =
                class.secret_commands().iter().filter(|r| r.0 == n).map(|r| format!("{r:?}")).collect();
            assert_eq!(found, rows, "secret commands of `{name}`");
            // The same row, compared by what it holds: a `const` table has no one address to compare.
            let scanned = wrappers::WRAPPERS.iter().find(|w| w.name == n).map(|w| format!("{w:?}"));
            assert_eq!(class.wrapper().map(|w| format!("{w:?}")), scanned, "wrapper `{name}`");
        }
    }

    #[test]
    fn the_secret_commands_of_one_program_are_next_to_each_other() {
        // Else a program's rows span others' and each look-up compares their names too.
        for (i, (name, ..)) in secrets::SECRET_COMMANDS.iter().enumerate() {
            let rows = Class::of(name).secret_commands();
            assert!(rows.iter().all(|r| r.0 == *name), "`{name}` (row {i}) has rows of other programs between its own");
        }
    }

    #[test]
    fn a_byte_is_in_a_first_byte_set_exactly_when_its_bit_is_set() {
        let sets = [0, 1, u128::MAX, 1 << 63, 1 << 64, 1 << 127, first_bytes(&["curl", "~x", "{", "\u{7f}", "é"])];
        for set in sets {
            for b in 0..300u32 {
                let expected = b < 128 && (set >> b) & 1 == 1;
                assert_eq!(in_first_bytes(set, b), expected, "byte {b} in {set:#x}");
            }
        }
    }

    #[test]
    fn names_answer_what_scanning_their_rows_answers() {
        let rows: &'static [&'static str] = &["curl", "wget", "", "écho", "nc", "Zed", "a-b"];
        let table = Names::new(rows);
        let mut asked = names();
        asked.extend(
            // `carl` and `wgot` share a row's filter bit (length and end bytes) and are still not rows.
            [
                "curl", "wget", "", "écho", "é", "nc", "n", "ncx", "Zed", "zed", "a-b", "a", "c", "\u{7f}x", "carl",
                "wgot",
            ]
            .map(String::from),
        );
        for name in asked {
            assert_eq!(table.has(&name), rows.contains(&name.as_str()), "`{name}`");
        }
        assert!(!Names::new(&[]).has("") && !Names::new(&[]).has("x"));
        assert_eq!(filter_bit(b"carl"), filter_bit(b"curl"));
        for table in [commands::SHELLS, commands::DOWNLOADERS, secrets::DUMPS, commands::ANALYSED_BUILTINS] {
            let names = Names::new(table);
            for name in table.iter().copied().chain(["x", "", "ab", "sh2", "bash "]) {
                assert_eq!(names.has(name), table.contains(&name), "`{name}`");
            }
        }
        assert_eq!(table.rows(), rows);
    }

    #[test]
    fn a_listed_name_is_one_the_table_contains() {
        for name in names() {
            for table in [commands::SHELLS, commands::DOWNLOADERS, secrets::DUMPS, &["", "a", "ab", "ba"]] {
                assert_eq!(listed(table, &name), table.contains(&name.as_str()), "`{name}`");
            }
        }
        assert!(listed(&["", "x"], "") && !listed(&["x"], ""));
    }

    #[test]
    fn a_name_of_no_table_has_no_class() {
        assert_eq!(Class::of("cargo"), Class::default());
        assert_eq!(Class::of("SH"), Class::default());
        assert!(Class::of("sudo").wrapper().is_some_and(|w| w.name == "sudo"));
        assert!(Class::of("bash").is(Table::Shell) && !Class::of("bash").is(Table::Downloader));
    }
}
