//! The stream between a waiting `qsub -I` and the mother superior running the job's terminal,
//! in the same frames as everything else ([`crate::frame`]).
//!
//! The mom connects to the host and port the job names (`JobSpec::interactive`) and sends
//! [`MomToQsub::Hello`] with the job id and the secret; qsub answers [`QsubToMom::Accept`] with
//! its terminal type and window size, or closes the connection. Then both sides send `Data`
//! (keystrokes one way, terminal output the other), qsub sends `WindowSize` on every change,
//! and the mom ends with `Exit` once the job's shell is gone, then closes.
//!
//! Must not know: ptys, terminals, processes; only the messages.

use serde::{Deserialize, Serialize};

/// The version of this stream, in `Hello`.
pub const INTERACTIVE_VERSION: u32 = 1;

/// From the mother superior to qsub.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MomToQsub {
    /// First frame: which job, and the secret qsub put in the job.
    Hello { version: u32, job_id: String, secret: String },
    /// Terminal output.
    Data(#[serde(with = "bytes_as_text")] Vec<u8>),
    /// The job's shell ended: its PBS exit status (pbs-reference 7.2: 0..=255 exit code,
    /// 256 + N killed by signal N, negative when the mom ended it, e.g. -29 walltime).
    Exit { status: i32 },
}

impl std::fmt::Debug for MomToQsub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MomToQsub::Hello { version, job_id, .. } => {
                f.debug_struct("Hello").field("version", version).field("job_id", job_id).finish_non_exhaustive()
            }
            MomToQsub::Data(bytes) => write!(f, "Data({} bytes)", bytes.len()),
            MomToQsub::Exit { status } => f.debug_struct("Exit").field("status", status).finish(),
        }
    }
}

/// From qsub to the mother superior.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum QsubToMom {
    /// The answer to a `Hello` qsub accepts: the job may start.
    Accept { term: Option<String>, size: WindowSize },
    /// Keystrokes.
    Data(#[serde(with = "bytes_as_text")] Vec<u8>),
    /// The terminal's new size.
    WindowSize(WindowSize),
}

/// A terminal's size in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSize {
    pub rows: u16,
    pub cols: u16,
}

impl Default for WindowSize {
    /// What qsub sends when its terminal cannot tell (as OpenPBS does).
    fn default() -> WindowSize {
        WindowSize { rows: 20, cols: 80 }
    }
}

/// Terminal bytes as a JSON string of the characters U+0000..U+00FF (one per byte), so the
/// mostly-ASCII traffic of a terminal stays about its own size on the wire (a JSON array of
/// numbers would be three to four times larger).
mod bytes_as_text {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        let text: String = bytes.iter().map(|&byte| char::from(byte)).collect();
        serializer.serialize_str(&text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).map_err(|_| D::Error::custom(format!("{c:?} is not a byte"))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_through_frames() {
        let hello = MomToQsub::Hello { version: INTERACTIVE_VERSION, job_id: "1.s".into(), secret: "ab".repeat(16) };
        let bytes = crate::frame::encode(&hello).unwrap();
        assert_eq!(crate::frame::read::<MomToQsub>(&mut bytes.as_slice()).unwrap(), hello);
        let size = QsubToMom::WindowSize(WindowSize { rows: 50, cols: 132 });
        let bytes = crate::frame::encode(&size).unwrap();
        assert_eq!(crate::frame::read::<QsubToMom>(&mut bytes.as_slice()).unwrap(), size);
    }

    #[test]
    fn data_is_compact_and_every_byte_survives() {
        let all: Vec<u8> = (0..=255).collect();
        let bytes = crate::frame::encode(&MomToQsub::Data(all.clone())).unwrap();
        assert_eq!(crate::frame::read::<MomToQsub>(&mut bytes.as_slice()).unwrap(), MomToQsub::Data(all));
        let text = b"hello world\r\n".repeat(100);
        let encoded = crate::frame::encode(&QsubToMom::Data(text.clone())).unwrap();
        assert!(encoded.len() < text.len() * 3 / 2, "{} bytes for {}", encoded.len(), text.len());
        let garbled = br#"{"Data":"\u0100"}"#;
        assert!(crate::frame::decode::<QsubToMom>(garbled).is_err(), "a character above U+00FF is no byte");
    }

    #[test]
    fn debug_hides_the_secret_and_the_data() {
        let hello = MomToQsub::Hello { version: 1, job_id: "1.s".into(), secret: "feedface".repeat(4) };
        assert!(!format!("{hello:?}").contains("feedface"));
        assert_eq!(format!("{:?}", MomToQsub::Data(b"password\r".to_vec())), "Data(9 bytes)");
    }
}
