//! Sizes (`mem`, `vmem`, ...) per pbs-reference section 3.5: integer, optional multiplier
//! `k m g t p e` (powers of 1024), optional unit `b` or `w` (8-byte words), case-insensitive.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Multiplier letters in order of their power of 1024.
const MULTIPLIERS: &[u8] = b"kmgtpe";
const EXPECTED: &str = "expected an integer, an optional multiplier k, m, g, t, p or e and an optional unit b or w";
const TOO_LARGE: &str = "too large (more than 64 bits of bytes)";

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
        let bad = |why: &str| format!("bad size '{text}': {why}");
        let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (digits, suffix) = text.split_at(digits_end);
        if digits.is_empty() {
            return Err(bad(EXPECTED));
        }
        if suffix.starts_with('.') {
            return Err(bad("fractions are not allowed"));
        }
        let mut rest = suffix.as_bytes();
        let mut shift = 0u8;
        if let Some(index) = rest.first().and_then(|b| MULTIPLIERS.iter().position(|m| m.eq_ignore_ascii_case(b))) {
            // `index` < 6, so the shift is 1..=6.
            shift = index as u8 + 1;
            rest = &rest[1..];
        }
        let words = match rest {
            [] => false,
            [unit] if unit.eq_ignore_ascii_case(&b'b') => false,
            [unit] if unit.eq_ignore_ascii_case(&b'w') => true,
            _ => return Err(bad(EXPECTED)),
        };
        let value: u64 = digits.parse().map_err(|_| bad(TOO_LARGE))?;
        let size = Size { value, shift, words };
        size.checked_bytes().ok_or_else(|| bad(TOO_LARGE))?;
        Ok(size)
    }

    /// The size in bytes, or `None` if it does not fit in 64 bits.
    pub fn checked_bytes(&self) -> Option<u64> {
        let unit: u64 = if self.words { 8 } else { 1 };
        self.value.checked_mul(1u64.checked_shl(10 * self.shift as u32)?)?.checked_mul(unit)
    }

    /// A size of `kb` kilobytes (how usage is reported: `4312kb`).
    pub fn from_kb(kb: u64) -> Size {
        Size { value: kb, shift: 1, words: false }
    }

    /// The size in bytes, saturating.
    pub fn bytes(&self) -> u64 {
        self.checked_bytes().unwrap_or(u64::MAX)
    }

    /// `self` times `count`, in the same unit (OpenPBS multiplies a chunk's size by its chunk
    /// count this way), or `None` if it overflows.
    pub fn times(self, count: u64) -> Option<Size> {
        let size = Size { value: self.value.checked_mul(count)?, ..self };
        size.checked_bytes().map(|_| size)
    }

    /// The sum of two sizes as OpenPBS adds them (`normalize_size` and `set_size` in
    /// `src/lib/Libattr/attr_fn_size.c`): words become bytes unless both are words, a size
    /// without multiplier is rounded up to kilobytes, and the sum is in the smaller of the two
    /// multipliers (`2gb + 512mb = 2560mb`). Adding to zero keeps the other as it is. `None` if
    /// the sum does not fit 64 bits of bytes.
    pub fn checked_add(self, other: Size) -> Option<Size> {
        if self.value == 0 {
            return Some(other);
        }
        let (mut a, mut b) = (self, other);
        if a.words != b.words {
            for size in [&mut a, &mut b] {
                if size.words {
                    *size = Size { value: size.value.checked_mul(8)?, words: false, ..*size };
                }
            }
        }
        for size in [&mut a, &mut b] {
            if size.shift == 0 {
                *size = Size { value: size.value.div_ceil(1024), shift: 1, ..*size };
            }
        }
        let shift = a.shift.min(b.shift);
        let in_shift = |size: Size| size.value.checked_mul(1u64.checked_shl(10 * u32::from(size.shift - shift))?);
        let sum = Size { value: in_shift(a)?.checked_add(in_shift(b)?)?, shift, words: a.words };
        sum.checked_bytes().map(|_| sum)
    }
}

impl fmt::Display for Size {
    /// Normalised display: lower-case multiplier and `b`/`w` (`2gb`, `1024b`, `8w`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mult = ["", "k", "m", "g", "t", "p", "e"][self.shift.min(6) as usize];
        write!(f, "{}{}{}", self.value, mult, if self.words { "w" } else { "b" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_normalises_reference_examples() {
        let cases = [
            ("2G", "2gb", 2 << 30),
            ("2GB", "2gb", 2 << 30),
            ("4096mb", "4096mb", 4096 << 20),
            ("1024", "1024b", 1024),
            ("8w", "8w", 64),
            ("14GB", "14gb", 14 << 30),
            ("13MB", "13mb", 13 << 20),
            ("12kB", "12kb", 12 << 10),
            ("1234B", "1234b", 1234),
            ("1t", "1tb", 1 << 40),
            ("1P", "1pb", 1 << 50),
            ("3e", "3eb", 3 << 60),
            ("2kw", "2kw", 2 * 1024 * 8),
            ("0", "0b", 0),
            ("007mb", "7mb", 7 << 20),
        ];
        for (text, shown, bytes) in cases {
            let size = Size::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(size.to_string(), shown, "{text}");
            assert_eq!(size.bytes(), bytes, "{text}");
            assert_eq!(size.checked_bytes(), Some(bytes), "{text}");
        }
    }

    #[test]
    fn rejects_bad_sizes() {
        for text in [
            "",
            "gb",
            "2.5gb",
            "1.0",
            "-1gb",
            "+1gb",
            " 1gb",
            "1gb ",
            "1 gb",
            "1x",
            "1kk",
            "1bw",
            "1wb",
            "1kbb",
            "1gé",
            "é",
            "16e",
            "99999999999999999999",
            "18446744073709551615k",
        ] {
            let err = Size::parse(text).expect_err(text);
            assert!(err.contains(&format!("'{text}'")), "{err} does not name {text:?}");
        }
    }

    #[test]
    fn sums_as_openpbs_does() {
        let sum = |a: &str, b: &str| {
            let sum = Size::parse(a).unwrap().checked_add(Size::parse(b).unwrap());
            sum.map_or_else(|| "overflow".to_string(), |size| size.to_string())
        };
        let cases = [
            ("2gb", "2gb", "4gb"),
            ("2gb", "512mb", "2560mb"),
            ("512mb", "2gb", "2560mb"),
            ("1000b", "1kb", "2kb"),
            ("1025", "0kb", "2kb"),
            ("0b", "1000b", "1000b"),
            ("1kw", "1kw", "2kw"),
            ("1kw", "1kb", "9kb"),
            ("1gb", "1w", "1048577kb"),
            ("15eb", "1eb", "overflow"),
        ];
        for (a, b, expected) in cases {
            assert_eq!(sum(a, b), expected, "{a} + {b}");
        }
        assert_eq!(Size::parse("4gb").unwrap().times(3).unwrap().to_string(), "12gb");
        assert_eq!(Size::parse("8eb").unwrap().times(2), None);
    }

    #[test]
    fn largest_sizes_fit() {
        assert_eq!(Size::parse("15e").unwrap().bytes(), 15 << 60);
        assert_eq!(Size::parse("18446744073709551615").unwrap().bytes(), u64::MAX);
        assert_eq!(Size::parse("2305843009213693951w").unwrap().bytes(), u64::MAX - 7);
    }

    #[test]
    fn error_messages() {
        let text: String =
            ["gb", "2.5gb", "16e", "1x"].iter().map(|input| format!("{}\n", Size::parse(input).unwrap_err())).collect();
        insta::assert_snapshot!(text);
    }
}
