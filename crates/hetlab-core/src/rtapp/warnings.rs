//! What rt-app reads past: keys its parser never asks for (json-c hands it only the keys it
//! looks up, so any other is skipped without a word) and settings it passes to a kernel newer
//! than hetlab's. Each becomes one warning, in file order, never twice.

/// The warnings of one file, in the order they were found.
#[derive(Debug, Default)]
pub(super) struct Warnings(Vec<String>);

impl Warnings {
    /// `at_key` (the key's place in the file) is not one rt-app reads where it stands.
    pub(super) fn ignored_key(&mut self, at_key: &str, known: &str) {
        self.note(format!("{at_key}: rt-app does not read this key here and ignores it (it reads {known})"));
    }

    /// A warning, unless the same one was given already.
    pub(super) fn note(&mut self, text: String) {
        if !self.0.contains(&text) {
            self.0.push(text);
        }
    }

    pub(super) fn into_vec(self) -> Vec<String> {
        self.0
    }
}
