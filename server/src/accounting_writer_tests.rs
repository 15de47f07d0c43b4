//! The accounting writer: records land in their day's file in order, records left in the store
//! by a crash are written once at start, a write error is retried until it works, and records
//! close together are gathered into one write.

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

/// Records queued while the writer gathers are written in one round (one fsync, one forget);
/// a flush ends the gathering at once, and what comes after it waits for the next round.
#[test]
fn records_close_together_share_one_write_and_a_flush_ends_the_gathering() {
    let dir = tempfile::tempdir().unwrap();
    let forgotten = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&forgotten);
    let forget: Forget = Box::new(move |last| seen.lock().unwrap().push(last));
    let hour = Duration::from_secs(3600);
    let accountant = Accountant::spawn_gathering(dir.path().to_path_buf(), Vec::new(), forget, hour).unwrap();
    accountant.append(vec![record(1, MONDAY, "q")]);
    accountant.append(vec![record(2, MONDAY, "s")]);
    accountant.append(vec![record(3, MONDAY, "e")]);
    accountant.flush(Duration::from_secs(30));
    assert_eq!(std::fs::read_to_string(day_file(dir.path(), MONDAY)).unwrap(), "q\ns\ne\n");
    assert_eq!(*forgotten.lock().unwrap(), [3], "one round for the three");

    let (sender, receiver) = mpsc::channel();
    for work in [record(4, MONDAY, "a"), record(5, MONDAY, "b")] {
        sender.send(Work::Append(vec![work])).unwrap();
    }
    let (done, _answer) = mpsc::channel();
    sender.send(Work::Flush(done)).unwrap();
    sender.send(Work::Append(vec![record(6, MONDAY, "c")])).unwrap();
    let (mut pending, mut waiting) = (Vec::new(), Vec::new());
    gather(&receiver, &mut pending, &mut waiting, Instant::now() + hour);
    assert_eq!(pending.iter().map(|record| record.id).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(waiting.len(), 1);
    assert!(matches!(receiver.try_recv(), Ok(Work::Append(after)) if after[0].id == 6), "left for the next round");
}
