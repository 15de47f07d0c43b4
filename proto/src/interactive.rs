//! The stream between a waiting `qsub -I` and the mother superior running the job's terminal,
//! in the same frames as everything else ([`crate::frame`]).
//!
//! The mom connects to the host and port the job names (`JobSpec::interactive`). Whoever
//! listens there may not be the qsub that submitted the job (it may have died and another user
//! taken its port), so the secret qsub put in the job never crosses the wire, and each side
//! proves it holds it before the other reveals anything:
//! 1. mom -> [`MomToQsub::Challenge`]: the job id and a fresh nonce;
//! 2. qsub -> [`QsubToMom::Proof`]: its own nonce and [`proof`]`(Prover::Qsub, ..)`, an
//!    HMAC-SHA256 keyed by the secret over both nonces and the job id; on the TCP transport
//!    also a MUNGE credential carrying that proof, whose uid the mom checks is the job owner's;
//! 3. mom -> [`MomToQsub::Proven`]: [`proof`]`(Prover::Mom, ..)`, so qsub knows the mom is
//!    genuine before it sends a keystroke;
//! 4. qsub -> [`QsubToMom::Accept`] with its terminal type and window size.
//!
//! Then both sides send `Data` (keystrokes one way, terminal output the other), qsub sends
//! `WindowSize` on every change, and the mom ends with `Exit` once the job's shell is gone,
//! then closes. A peer that fails a step is dropped; the mom then fails the job's start.
//!
//! Must not know: ptys, terminals, processes, MUNGE; only the messages and the proofs.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The version of this stream, in `Challenge`. Version 1 sent the secret in the clear; the two
/// do not interoperate (a mixed pair fails the job's start, it never falls back).
pub const INTERACTIVE_VERSION: u32 = 2;

/// Bytes of randomness in a nonce (sent as hex).
const NONCE_BYTES: usize = 32;

/// From the mother superior to qsub.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MomToQsub {
    /// First frame: which job, and the nonce qsub's proof must cover. Nothing secret.
    Challenge { version: u32, job_id: String, nonce: String },
    /// The mom's proof that it holds the job's secret, over both nonces.
    Proven { proof: String },
    /// Terminal output.
    Data(#[serde(with = "bytes_as_text")] Vec<u8>),
    /// The job's shell ended: its PBS exit status (pbs-reference 7.2: 0..=255 exit code,
    /// 256 + N killed by signal N, negative when the mom ended it, e.g. -29 walltime).
    Exit { status: i32 },
}

impl std::fmt::Debug for MomToQsub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MomToQsub::Challenge { version, job_id, .. } => {
                f.debug_struct("Challenge").field("version", version).field("job_id", job_id).finish_non_exhaustive()
            }
            MomToQsub::Proven { .. } => f.debug_struct("Proven").finish_non_exhaustive(),
            MomToQsub::Data(bytes) => write!(f, "Data({} bytes)", bytes.len()),
            MomToQsub::Exit { status } => f.debug_struct("Exit").field("status", status).finish(),
        }
    }
}

/// From qsub to the mother superior.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum QsubToMom {
    /// The answer to a `Challenge`: qsub's nonce for the mom's proof, qsub's proof, and on the
    /// TCP transport a MUNGE credential whose payload is the proof (its uid is qsub's user).
    Proof {
        nonce: String,
        proof: String,
        #[serde(default)]
        credential: Option<String>,
    },
    /// After the mom's `Proven`: the job may start.
    Accept { term: Option<String>, size: WindowSize },
    /// Keystrokes.
    Data(#[serde(with = "bytes_as_text")] Vec<u8>),
    /// The terminal's new size.
    WindowSize(WindowSize),
}

/// Who proves it holds the secret: part of what the HMAC covers, so one side's proof is never
/// the other's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prover {
    Qsub,
    Mom,
}

/// What both nonces and the job id of one handshake are.
#[derive(Debug, Clone, Copy)]
pub struct Handshake<'a> {
    pub job_id: &'a str,
    /// The mom's, from `Challenge`.
    pub mom_nonce: &'a str,
    /// qsub's, from `Proof`.
    pub qsub_nonce: &'a str,
}

/// A fresh nonce from the kernel, as hex.
pub fn nonce() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; NONCE_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

/// `prover`'s proof of holding `secret` in `handshake`: HMAC-SHA256 keyed by the secret over a
/// label naming the prover and each field with its length, as hex.
pub fn proof(secret: &str, prover: Prover, handshake: &Handshake) -> String {
    hex::encode(mac(secret, prover, handshake).finalize().into_bytes())
}

/// Whether `presented` is `prover`'s proof for `handshake` (compared in constant time).
pub fn verify(secret: &str, prover: Prover, handshake: &Handshake, presented: &str) -> bool {
    match hex::decode(presented) {
        Ok(bytes) => mac(secret, prover, handshake).verify_slice(&bytes).is_ok(),
        Err(_) => false,
    }
}

/// What qsub's MUNGE credential carries: its proof under a label of its own, so that the
/// credential fits this handshake only (and munged refuses it a second time).
pub fn credential_payload(proof: &str) -> Vec<u8> {
    [b"minipbs qsub -I proof ".as_slice(), proof.as_bytes()].concat()
}

fn mac(secret: &str, prover: Prover, handshake: &Handshake) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    let label: &[u8] = match prover {
        Prover::Qsub => b"minipbs qsub -I: qsub",
        Prover::Mom => b"minipbs qsub -I: mom",
    };
    for part in [label, handshake.job_id.as_bytes(), handshake.mom_nonce.as_bytes(), handshake.qsub_nonce.as_bytes()] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac
}

/// Why qsub refused the peer that connected to its port.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("{0}")]
    Frame(#[from] crate::frame::FrameError),
    #[error("did not introduce itself")]
    NoChallenge,
    #[error("speaks version {0}, not {INTERACTIVE_VERSION}")]
    Version(u32),
    #[error("named job {0}, not this one")]
    OtherJob(String),
    #[error("cannot make a nonce: {0}")]
    Nonce(getrandom::Error),
    #[error("cannot make a MUNGE credential: {0}")]
    Credential(String),
    #[error("did not prove it holds the job's secret")]
    BadProof,
}

/// qsub's side of the handshake, up to (not including) its `Accept` (blocking; the caller sets
/// the timeouts): reads the mom's challenge, proves itself with `credential` (the TCP
/// transport's MUNGE credential for a payload, or `None`), and checks the mom's proof.
pub fn answer_challenge<S: std::io::Read + std::io::Write>(
    stream: &mut S,
    job_id: &str,
    secret: &str,
    credential: impl FnOnce(&[u8]) -> Result<Option<String>, String>,
) -> Result<(), AnswerError> {
    let limits = crate::frame::Limits::HANDSHAKE;
    let MomToQsub::Challenge { version, job_id: named, nonce: mom_nonce } = crate::frame::read_limited(stream, limits)?
    else {
        return Err(AnswerError::NoChallenge);
    };
    if version != INTERACTIVE_VERSION {
        return Err(AnswerError::Version(version));
    }
    if named != job_id {
        return Err(AnswerError::OtherJob(named));
    }
    let qsub_nonce = nonce().map_err(AnswerError::Nonce)?;
    let shake = Handshake { job_id, mom_nonce: &mom_nonce, qsub_nonce: &qsub_nonce };
    let mine = proof(secret, Prover::Qsub, &shake);
    let credential = credential(&credential_payload(&mine)).map_err(AnswerError::Credential)?;
    crate::frame::write(stream, &QsubToMom::Proof { nonce: qsub_nonce.clone(), proof: mine, credential })?;
    match crate::frame::read_limited(stream, limits)? {
        MomToQsub::Proven { proof: theirs } if verify(secret, Prover::Mom, &shake, &theirs) => Ok(()),
        _ => Err(AnswerError::BadProof),
    }
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
pub(crate) mod bytes_as_text {
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
        let challenge =
            MomToQsub::Challenge { version: INTERACTIVE_VERSION, job_id: "1.s".into(), nonce: nonce().unwrap() };
        let bytes = crate::frame::encode(&challenge).unwrap();
        assert_eq!(crate::frame::read::<MomToQsub>(&mut bytes.as_slice()).unwrap(), challenge);
        let size = QsubToMom::WindowSize(WindowSize { rows: 50, cols: 132 });
        let bytes = crate::frame::encode(&size).unwrap();
        assert_eq!(crate::frame::read::<QsubToMom>(&mut bytes.as_slice()).unwrap(), size);
        let without_credential = br#"{"Proof":{"nonce":"ab","proof":"cd"}}"#;
        let proof = crate::frame::decode::<QsubToMom>(without_credential).unwrap();
        assert_eq!(proof, QsubToMom::Proof { nonce: "ab".into(), proof: "cd".into(), credential: None });
    }

    #[test]
    fn a_proof_fits_only_its_secret_prover_job_and_nonces() {
        let secret = "5ec2e7".repeat(4);
        let (mom_nonce, qsub_nonce) = (nonce().unwrap(), nonce().unwrap());
        assert_eq!(mom_nonce.len(), 2 * NONCE_BYTES);
        assert_ne!(mom_nonce, qsub_nonce);
        let handshake = Handshake { job_id: "9.s", mom_nonce: &mom_nonce, qsub_nonce: &qsub_nonce };
        let by_qsub = proof(&secret, Prover::Qsub, &handshake);
        assert!(verify(&secret, Prover::Qsub, &handshake, &by_qsub));
        assert!(!by_qsub.contains(&secret));
        assert!(!verify(&secret, Prover::Mom, &handshake, &by_qsub), "not a proof the other way");
        assert!(!verify(&"5ec2e8".repeat(4), Prover::Qsub, &handshake, &by_qsub), "another secret");
        let other_job = Handshake { job_id: "10.s", ..handshake };
        assert!(!verify(&secret, Prover::Qsub, &other_job, &by_qsub));
        let other_nonce = Handshake { mom_nonce: &qsub_nonce, ..handshake };
        assert!(!verify(&secret, Prover::Qsub, &other_nonce, &by_qsub), "a proof for an old challenge");
        for garbled in ["", "zz", &by_qsub[1..], &by_qsub[..62], "é"] {
            assert!(!verify(&secret, Prover::Qsub, &handshake, garbled), "{garbled:?}");
        }
        // Only hex digits: a byte `0f` written `+f` (which `from_str_radix` reads) is refused.
        let (job, led) = (0..400)
            .map(|n| format!("{n}.s"))
            .map(|job| {
                let led = proof(&secret, Prover::Qsub, &Handshake { job_id: &job, ..handshake });
                (job, led)
            })
            .find(|(_, led)| led.starts_with('0'))
            .expect("one proof in 400 starts with a 0 nibble");
        let with_job = Handshake { job_id: &job, ..handshake };
        assert!(verify(&secret, Prover::Qsub, &with_job, &led));
        assert!(!verify(&secret, Prover::Qsub, &with_job, &led.replacen('0', "+", 1)), "a signed byte");
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
    fn debug_hides_the_proof_and_the_data() {
        let proven = MomToQsub::Proven { proof: "feedface".repeat(4) };
        assert!(!format!("{proven:?}").contains("feedface"));
        assert_eq!(format!("{:?}", MomToQsub::Data(b"password\r".to_vec())), "Data(9 bytes)");
    }
}
