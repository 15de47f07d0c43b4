//! Sizes (`mem`, `vmem`, ...) per pbs-reference section 3.5: integer, optional multiplier
//! `k m g t p e` (powers of 1024), optional unit `b` or `w` (8-byte words), case-insensitive.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A size as the user wrote it, kept so it can be displayed in PBS's normalised form (`2gb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    /// The number as written.
    pub value: u64,
    /// Power of 1024 of the multiplier: 0 none, 1 k, 2 m, 3 g, 4 t, 5 p, 6 e.
    pub shift: u8,
    /// `w` unit (8-byte words) instead of bytes.
    pub words: bool,
}

impl Size {
    /// Parses `2G`, `2gb`, `4096mb`, `1024`, `8w`, `12kB`. Errors name the text.
    pub fn parse(text: &str) -> Result<Size, String> {
        let _ = text;
        unimplemented!("filled in by the parser work")
    }

    /// A size of `kb` kilobytes (how usage is reported: `4312kb`).
    pub fn from_kb(kb: u64) -> Size {
        Size { value: kb, shift: 1, words: false }
    }

    /// The size in bytes, saturating.
    pub fn bytes(&self) -> u64 {
        let unit: u64 = if self.words { 8 } else { 1 };
        self.value.saturating_mul(1u64 << (10 * self.shift as u32)).saturating_mul(unit)
    }
}

impl fmt::Display for Size {
    /// Normalised display: lower-case multiplier and `b`/`w` (`2gb`, `1024b`, `8w`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mult = ["", "k", "m", "g", "t", "p", "e"][self.shift.min(6) as usize];
        write!(f, "{}{}{}", self.value, mult, if self.words { "w" } else { "b" })
    }
}
