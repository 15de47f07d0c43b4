//! The frame decoder as the server and mom read it: a byte stream (length prefix + JSON)
//! read under the handshake and the normal limits as `Hello`, `ClientRequest` and
//! `MomToServer` (and the mom's `ServerToMom`), and the `qsub -I` stream's handshake and
//! relay messages both ways (`MomToQsub` as qsub reads it, `QsubToMom` as the mom does: what
//! anyone on the network can send to a waiting qsub or to a mom). Never a panic, never an allocation the bytes
//! did not pay for; what decodes encodes again and decodes to the same value. The sealed
//! envelope around a body on TCP has its own target (`seal.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::frame::{self, Limits};
use proto::interactive::{MomToQsub, QsubToMom};
use proto::{ClientRequest, Hello, MomToServer, ServerToMom};
use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Debug;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let limits = if which & 0x80 == 0 { Limits::HANDSHAKE } else { Limits::NORMAL };
    match which % 6 {
        0 => stream::<Hello>(rest, limits),
        1 => stream::<ClientRequest>(rest, limits),
        2 => stream::<MomToServer>(rest, limits),
        3 => stream::<ServerToMom>(rest, limits),
        4 => stream::<MomToQsub>(rest, limits),
        _ => stream::<QsubToMom>(rest, limits),
    }
    // The body alone, as `decode` sees it.
    let _ = frame::decode::<ClientRequest>(rest);
});

/// Reads frames from `bytes` until one fails; each decoded message round-trips.
fn stream<T: DeserializeOwned + Serialize + PartialEq + Debug>(mut bytes: &[u8], limits: Limits) {
    while let Ok(message) = frame::read_limited::<T>(&mut bytes, limits) {
        let again = frame::encode(&message).expect("a decoded message encodes");
        let back: T = frame::read(&mut again.as_slice()).expect("an encoded message decodes");
        assert_eq!(back, message);
    }
}
