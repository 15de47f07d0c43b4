//! The accounting writer: records land in their day's file in order, records left in the store
//! by a crash are written once at start, and a write error is retried until it works.

use super::*;
use std::sync::{Arc, Mutex};

const MONDAY: i64 = 1_700_000_000;

fn record(id: u64, time: i64, line: &str) -> AccountingRecord {
    AccountingRecord { id, time, line: line.to_string() }
}

fn day_file(dir: &Path, time: i64) -> PathBuf {
    dir.join(Tm::local(time).file_day())
}

/// A writer for `dir` whose forgotten ids are recorded.
fn writer(dir: &Path, pending: Vec<AccountingRecord>) -> (Accountant, Arc<Mutex<Vec<u64>>>) {
    let forgotten = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&forgotten);
    let forget: Forget = Box::new(move |last| seen.lock().unwrap().push(last));
    (Accountant::spawn(dir.to_path_buf(), pending, forget).unwrap(), forgotten)
}

#[test]
fn records_are_appended_in_order_to_the_file_of_their_day_then_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let wednesday = MONDAY + 2 * 86_400;
    let (accountant, forgotten) = writer(dir.path(), Vec::new());
    accountant.append(vec![record(1, MONDAY, "a"), record(2, MONDAY, "b"), record(3, wednesday, "c")]);
    accountant.append(vec![record(4, MONDAY, "d")]);
    accountant.flush(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(day_file(dir.path(), MONDAY)).unwrap(), "a\nb\nd\n");
    assert_eq!(std::fs::read_to_string(day_file(dir.path(), wednesday)).unwrap(), "c\n");
    assert_eq!(forgotten.lock().unwrap().last(), Some(&4), "every record forgotten once written");
}

#[test]
fn records_left_by_a_crash_are_written_once_at_start() {
    let dir = tempfile::tempdir().unwrap();
    // "a" reached the file (after older, forgotten records) before the crash, "b" and "c" did
    // not; only the file's tail is searched.
    let older = "old record\n".repeat(1000);
    std::fs::write(day_file(dir.path(), MONDAY), format!("{older}a\n")).unwrap();
    let pending = vec![record(7, MONDAY, "a"), record(8, MONDAY, "b"), record(9, MONDAY, "c")];
    let (accountant, forgotten) = writer(dir.path(), pending);
    accountant.flush(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(day_file(dir.path(), MONDAY)).unwrap(), format!("{older}a\nb\nc\n"));
    assert_eq!(forgotten.lock().unwrap().last(), Some(&9));
}

#[test]
fn a_write_error_is_retried_until_it_works_and_nothing_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let file = day_file(dir.path(), MONDAY);
    // A directory where the day's file should be: every append fails (even as root).
    std::fs::create_dir(&file).unwrap();
    let (accountant, forgotten) = writer(dir.path(), Vec::new());
    accountant.append(vec![record(1, MONDAY, "a")]);
    std::thread::sleep(FIRST_RETRY_DELAY * 2);
    accountant.append(vec![record(2, MONDAY, "b")]);
    assert!(forgotten.lock().unwrap().is_empty(), "nothing forgotten while it cannot be written");
    std::fs::remove_dir(&file).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while forgotten.lock().unwrap().last() != Some(&2) {
        assert!(std::time::Instant::now() < deadline, "the records were never written");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");
}
