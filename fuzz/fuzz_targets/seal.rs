//! The sealed envelope of the TCP transport as the server and moms split it before asking
//! munged (`proto::seal::split`): garbage is refused cleanly, never a panic; what splits has a
//! `MUNGE:` credential line within `MAX_CREDENTIAL` and the rest of the bytes as its body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::seal::{split, MAX_CREDENTIAL};

fuzz_target!(|data: &[u8]| {
    if let Ok((credential, body)) = split(data) {
        assert!(credential.starts_with("MUNGE:"));
        assert!(credential.len() < MAX_CREDENTIAL);
        assert_eq!(credential.len() + 1 + body.len(), data.len());
        assert!(!credential.contains('\n'));
    }
});
