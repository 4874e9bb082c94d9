//! The ids kept so far, compared as a reader sees them (Unicode NFC, no
//! invisible characters, one kind of space), for the unique-id check.

use crate::error::Location;

/// Every id kept so far, compared in Unicode NFC, each with where it was first
/// seen: ids live end to end in one string, so a million ids take tens of MB.
pub(crate) struct IdSet {
    text: String,
    entries: Vec<(usize, u32, Location)>,
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

/// An id as compared: composed and decomposed forms of the same text are one id,
/// and so are ids that differ only by invisible characters (zero-width and other
/// format characters, bidi marks) or by the kind of space (no-break, thin, ...).
fn id_key(id: &str) -> std::borrow::Cow<'_, str> {
    if id.is_ascii() {
        std::borrow::Cow::Borrowed(id)
    } else {
        use unicode_categories::UnicodeCategories;
        use unicode_normalization::UnicodeNormalization;
        std::borrow::Cow::Owned(
            id.nfc().filter(|c| !c.is_other_format()).map(|c| if c.is_separator_space() { ' ' } else { c }).collect(),
        )
    }
}

impl IdSet {
    pub(crate) fn new() -> IdSet {
        IdSet {
            text: String::new(),
            entries: Vec::new(),
            table: hashbrown::HashTable::new(),
            hasher: Default::default(),
        }
    }

    fn written(&self, e: u32) -> &str {
        let (start, len, _) = &self.entries[e as usize];
        &self.text[*start..*start + *len as usize]
    }

    /// Adds `id`; when an equal id was added before, returns it as written and
    /// where it was, and adds nothing.
    pub(crate) fn insert(&mut self, id: &str, loc: &Location) -> Option<(&str, &Location)> {
        use std::hash::BuildHasher;
        let key = id_key(id);
        let hash = self.hasher.hash_one(key.as_ref());
        let found = self.table.find(hash, |&e| id_key(self.written(e)) == key).copied();
        if let Some(e) = found {
            return Some((self.written(e), &self.entries[e as usize].2));
        }
        let e = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        self.entries.push((self.text.len(), id.len() as u32, loc.clone()));
        self.text.push_str(id);
        let (entries, text, hasher) = (&self.entries, &self.text, &self.hasher);
        self.table.insert_unique(hash, e, |&x| {
            let (start, len, _) = &entries[x as usize];
            hasher.hash_one(id_key(&text[*start..*start + *len as usize]).as_ref())
        });
        None
    }
}
