//! The sealed envelope of the TCP transport as the server and moms split it before asking
//! munged (`proto::seal::split`): garbage is refused cleanly, never a panic; what splits has a
//! `MUNGE:` credential line within `MAX_CREDENTIAL` and the rest of the bytes as its body.
//! The same bytes as the clear-text parts of a connection's binding (a `Hello` and the nonce
//! it carries, the mom port's nonce frame): refused cleanly, or a nonce that writes back as it
//! was read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::seal::{split, Nonce, MAX_CREDENTIAL};

fuzz_target!(|data: &[u8]| {
    if let Ok((credential, body)) = split(data) {
        assert!(credential.starts_with("MUNGE:"));
        assert!(credential.len() < MAX_CREDENTIAL);
        assert_eq!(credential.len() + 1 + body.len(), data.len());
        assert!(!credential.contains('\n'));
    }
    if let Ok(nonce) = serde_json::from_slice::<Nonce>(data) {
        let text = serde_json::to_string(&nonce).unwrap();
        assert_eq!(serde_json::from_str::<Nonce>(&text).unwrap(), nonce);
        assert_eq!(text.len(), 66);
    }
    if let Ok(hello) = serde_json::from_slice::<proto::Hello>(data) {
        let again: proto::Hello = serde_json::from_slice(&serde_json::to_vec(&hello).unwrap()).unwrap();
        assert_eq!(again, hello);
    }
});
