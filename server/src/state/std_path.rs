//! A job's `Output_Path` or `Error_Path` as the server keeps it ([`StdPath`]): text that jobs
//! share, plus the one number that tells them apart. A loop of `qsub job.sh` or an array of
//! 10,000 subjobs keeps one `host:/work/job.sh.o` instead of a string per job and per path
//! (issue 19: the two strings were about a fifth of a queued job's heap, and most of an
//! array's). The whole text is made only when it is shown, stored or sent to a mom.
//!
//! Owns: the representation, its text and how a subjob's path comes from its parent's. Must
//! not: decide what a job's path is (`submission.rs` does, `alter_job.rs` on qalter).

use super::submission::ARRAY_INDEX_PLACEHOLDER;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A path as `host:/path` text; equal when their texts are equal, however they are kept.
#[derive(Clone, Debug)]
pub struct StdPath {
    shared: Arc<str>,
    fill: Fill,
}

/// What completes the shared text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    /// Nothing: the text is the path.
    Nothing,
    /// The number in decimal after the text (a default name's `.o<seq>`).
    Number(u64),
    /// Every array index placeholder of the text replaced by the index (a subjob's path, from
    /// its parent's).
    Index(u32),
}

impl StdPath {
    /// The path `text`, as it is.
    pub fn literal(text: &str) -> StdPath {
        StdPath { shared: Arc::from(text), fill: Fill::Nothing }
    }

    /// `prefix` followed by `number` (`host:/work/job.sh.o` and a job's seq).
    pub fn numbered(prefix: &str, number: u64) -> StdPath {
        StdPath { shared: Arc::from(prefix), fill: Fill::Number(number) }
    }

    /// A stored path of job `seq`: kept as [`StdPath::numbered`] when it ends in `seq`, so
    /// equal prefixes can be shared again after a restart.
    pub fn of_stored(text: &str, seq: u64) -> StdPath {
        let digits = seq.to_string();
        match text.strip_suffix(digits.as_str()) {
            Some(prefix) if !prefix.is_empty() => StdPath::numbered(prefix, seq),
            _ => StdPath::literal(text),
        }
    }

    /// Subjob `index`'s path from its parent's: the parent's text with every index
    /// placeholder replaced, sharing the parent's text when it is kept whole.
    pub fn of_subjob(parent: &StdPath, index: u32) -> StdPath {
        match parent.fill {
            Fill::Nothing if parent.shared.contains(ARRAY_INDEX_PLACEHOLDER) => {
                StdPath { shared: parent.shared.clone(), fill: Fill::Index(index) }
            }
            Fill::Nothing => parent.clone(),
            Fill::Number(_) | Fill::Index(_) => {
                StdPath::literal(&parent.text().replace(ARRAY_INDEX_PLACEHOLDER, &index.to_string()))
            }
        }
    }

    /// The whole path.
    pub fn text(&self) -> Cow<'_, str> {
        match self.fill {
            Fill::Nothing => Cow::Borrowed(&self.shared),
            Fill::Number(number) => {
                let mut digits = itoa::Buffer::new();
                Cow::Owned([&*self.shared, digits.format(number)].concat())
            }
            Fill::Index(index) => Cow::Owned(self.shared.replace(ARRAY_INDEX_PLACEHOLDER, &index.to_string())),
        }
    }

    /// Takes `other`'s shared text when it is the same text as this one's.
    pub fn share_with(&mut self, other: &StdPath) {
        if !Arc::ptr_eq(&self.shared, &other.shared) && self.shared == other.shared {
            self.shared = other.shared.clone();
        }
    }

    /// Whether the two keep their text in the same allocation (tests).
    #[cfg(test)]
    pub fn shares_text_with(&self, other: &StdPath) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Default for StdPath {
    fn default() -> StdPath {
        StdPath::literal("")
    }
}

impl PartialEq for StdPath {
    fn eq(&self, other: &StdPath) -> bool {
        self.fill == other.fill && self.shared == other.shared || self.text() == other.text()
    }
}

impl Eq for StdPath {}

impl PartialEq<&str> for StdPath {
    fn eq(&self, other: &&str) -> bool {
        self.text() == *other
    }
}

impl PartialEq<String> for StdPath {
    fn eq(&self, other: &String) -> bool {
        self.text() == other.as_str()
    }
}

impl fmt::Display for StdPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::StdPath;

    #[test]
    fn each_form_makes_the_path_it_stands_for() {
        assert_eq!(StdPath::literal("h:/w/out").text(), "h:/w/out");
        assert_eq!(StdPath::numbered("h:/w/job.sh.o", 42).text(), "h:/w/job.sh.o42");
        assert_eq!(StdPath::numbered("h:/w/job.sh.o", u64::MAX).text(), format!("h:/w/job.sh.o{}", u64::MAX));
        let parent = StdPath::literal("h:/w/job.sh.o7.^array_index^");
        let sub = StdPath::of_subjob(&parent, 3);
        assert_eq!(sub.text(), "h:/w/job.sh.o7.3");
        assert!(sub.shares_text_with(&parent), "a subjob keeps no text of its own");
        let twice = StdPath::literal("h:/w/^array_index^/x.^array_index^");
        assert_eq!(StdPath::of_subjob(&twice, 12).text(), "h:/w/12/x.12");
        let fixed = StdPath::literal("h:/w/all.out");
        assert_eq!(StdPath::of_subjob(&fixed, 5).text(), "h:/w/all.out");
        let numbered_parent = StdPath::numbered("h:/w/^array_index^.o", 9);
        assert_eq!(StdPath::of_subjob(&numbered_parent, 4).text(), "h:/w/4.o9");
    }

    #[test]
    fn a_stored_path_is_kept_numbered_only_when_it_ends_in_the_seq() {
        let stored = StdPath::of_stored("h:/w/job.sh.o15", 15);
        assert_eq!(stored.text(), "h:/w/job.sh.o15");
        assert!(stored.shares_text_with(&stored.clone()));
        assert!(StdPath::of_stored("h:/w/job.sh.o15", 15).fill == super::Fill::Number(15));
        assert!(StdPath::of_stored("h:/w/out", 15).fill == super::Fill::Nothing);
        assert!(StdPath::of_stored("15", 15).fill == super::Fill::Nothing, "never an empty prefix");
        assert_eq!(StdPath::of_stored("h:/w/out", 15).text(), "h:/w/out");
    }

    #[test]
    fn paths_are_equal_by_text_and_share_only_equal_text() {
        assert_eq!(StdPath::numbered("h:/w/j.o", 5), StdPath::literal("h:/w/j.o5"));
        assert_ne!(StdPath::numbered("h:/w/j.o", 5), StdPath::numbered("h:/w/j.o", 6));
        let mut first = StdPath::numbered("h:/w/j.o", 5);
        let second = StdPath::numbered("h:/w/j.o", 6);
        first.share_with(&second);
        assert!(first.shares_text_with(&second));
        assert_eq!(first.text(), "h:/w/j.o5", "sharing keeps each job's number");
        let mut other = StdPath::numbered("h:/w/k.o", 7);
        other.share_with(&second);
        assert!(!other.shares_text_with(&second));
        assert_eq!(other.text(), "h:/w/k.o7");
    }
}
