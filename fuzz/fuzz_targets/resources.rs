//! The resource grammar: `-l` lists (`parse_list`), then the request they make
//! (`ResourceRequest::from_list`: select/nodes/place, sizes, durations, counts), sizes and
//! durations alone, array ranges (`-J`/`-t`, expanded), `-W depend=` lists and `-M` mail
//! lists (nothing accepted may read as a sendmail option). The first byte
//! picks the parser, the rest is the text. Never a panic; errors point inside their input.
#![no_main]

use job::resources::{parse_list, ResourceRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    match which % 7 {
        0 => {
            if let Ok(pairs) = parse_list(text) {
                if let Ok(request) = ResourceRequest::from_list(&pairs) {
                    let _ = (
                        request.total_ncpus(),
                        request.total_ngpus(),
                        request.nodect(),
                        request.display_value("select"),
                    );
                }
            }
        }
        1 => {
            // One value under each interesting name, as `qsub -l name=<text>` would give it.
            for name in ["select", "nodes", "place", "walltime", "mem", "ncpus", "cput", "procs", "ngpus"] {
                if let Err(error) = ResourceRequest::from_list(&[(name.to_string(), text.to_string())]) {
                    let _ = error.caret_display();
                }
            }
        }
        2 => {
            if let Ok(size) = job::size::Size::parse(text) {
                let _ = (size.checked_bytes(), size.bytes());
            }
            if let Ok(seconds) = job::duration::parse_duration(text) {
                let _ = job::duration::format_hms(seconds);
            }
        }
        3 => {
            for parsed in [job::array::parse_openpbs(text), job::array::parse_torque(text)] {
                if let Ok(array) = parsed {
                    if let Ok(indices) = array.expand() {
                        assert!(indices.len() <= job::array::MAX_ARRAY_SIZE);
                        let _ = job::array::format_indices(&indices, array.step());
                    }
                }
            }
        }
        4 => {
            let _ = job::depend::parse(text);
        }
        5 => {
            // `-M` lists reach root's sendmail as arguments: whatever is accepted must never
            // read as an option or split into more words.
            if let Ok(addresses) = job::mail::parse_list(text) {
                assert!(addresses.len() <= job::mail::MAX_RECIPIENTS);
                for address in addresses {
                    assert!(!address.is_empty() && !address.starts_with('-'), "{address:?}");
                    assert!(address.len() <= job::mail::MAX_ADDRESS_LEN);
                    assert!(!address.chars().any(|c| c.is_whitespace() || c.is_control()), "{address:?}");
                }
            }
        }
        _ => {
            let _ = job::JobId::parse(text, "server");
            let _ = job::array::parse_range_id(text);
        }
    }
});
