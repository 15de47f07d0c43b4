//! The words the scheduler's notes are shown in, as OpenPBS's scheduler writes them
//! (`src/scheduler/job_info.cpp`, its `sched_error` table; `NOT_RUN_PREFIX` and
//! `NEVER_RUN_PREFIX` in `constant.h`), and the comment the server writes when a job starts
//! (`form_attr_comment` in `src/server/req_runjob.c`: `Job run at <date> on <exec_vnode>`).
//!
//! OpenPBS appends the amounts to a resource shortage (`ncpus (R: 4 A: 2 T: 4)`); the
//! scheduler here names the resource only, so the comment stops after its name.
//!
//! Must not know: how notes are made or kept (`state/sched_notes.rs`), status layout.

use crate::state::sched_notes::WaitWhy;

/// `NOT_RUN_PREFIX`.
const NOT_RUN: &str = "Not Running";
/// `NEVER_RUN_PREFIX`.
const NEVER_RUN: &str = "Can Never Run";
/// OpenPBS's `COMMENT_BUF_SIZE`: the longest comment the server writes at a start.
const COMMENT_BUF_SIZE: usize = 512;

/// The `comment` of a job that waits for `why`.
pub fn wait_comment(why: &WaitWhy) -> String {
    let reason = match why {
        WaitWhy::Resource(name) => format!("Insufficient amount of resource: {name}"),
        WaitWhy::Backfill => "Job would conflict with reservation or top job".to_string(),
        WaitWhy::StrictOrder => "Job would break strict sorted order".to_string(),
        WaitWhy::QueueLimit { queue } => format!("Queue {queue} job limit reached"),
        WaitWhy::QueueUserLimit { queue, user } => format!("Queue {queue} job limit reached for user {user}"),
        WaitWhy::ServerResource(name) => format!("Insufficient amount of server resource: {name}"),
        WaitWhy::Never => return format!("{NEVER_RUN}: Not enough of the right type of nodes available"),
    };
    format!("{NOT_RUN}: {reason}")
}

/// `Job run at Thu Nov 26 at 14:05 on (n1:ncpus=2)`: the comment OpenPBS's server writes when
/// it starts a job (local time, `%a %b %d at %H:%M`), cut with `...` at `COMMENT_BUF_SIZE`.
pub fn run_comment(now: i64, exec_vnode: &str) -> String {
    let tm = pbslog::time::Tm::local(now);
    // ctime(3): `Www Mmm dd hh:mm:ss yyyy`; the names are its first two words.
    let ctime = tm.ctime();
    let mut words = ctime.split_whitespace();
    let (weekday, month) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
    let mut text = format!("Job run at {weekday} {month} {:02} at {:02}:{:02} on ", tm.day, tm.hour, tm.minute);
    if text.len() + exec_vnode.len() > COMMENT_BUF_SIZE - 1 {
        let keep = (COMMENT_BUF_SIZE - 1 - 3).saturating_sub(text.len());
        let mut cut = keep.min(exec_vnode.len());
        while !exec_vnode.is_char_boundary(cut) {
            cut -= 1;
        }
        text.push_str(&exec_vnode[..cut]);
        text.push_str("...");
    } else {
        text.push_str(exec_vnode);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_comments_are_openpbs_texts() {
        let cases = [
            (WaitWhy::Resource("ngpus".into()), "Not Running: Insufficient amount of resource: ngpus"),
            (WaitWhy::Backfill, "Not Running: Job would conflict with reservation or top job"),
            (WaitWhy::StrictOrder, "Not Running: Job would break strict sorted order"),
            (WaitWhy::QueueLimit { queue: "workq".into() }, "Not Running: Queue workq job limit reached"),
            (
                WaitWhy::QueueUserLimit { queue: "workq".into(), user: "alice".into() },
                "Not Running: Queue workq job limit reached for user alice",
            ),
            (WaitWhy::ServerResource("lic".into()), "Not Running: Insufficient amount of server resource: lic"),
            (WaitWhy::Never, "Can Never Run: Not enough of the right type of nodes available"),
        ];
        for (why, text) in cases {
            assert_eq!(wait_comment(&why), text);
        }
    }

    #[test]
    fn run_comment_names_the_day_and_the_vnodes_and_is_bounded() {
        let text = run_comment(1_700_605_560, "(n1:ncpus=2)+(n2:ncpus=2)");
        assert!(text.starts_with("Job run at "), "{text}");
        assert!(text.ends_with(" on (n1:ncpus=2)+(n2:ncpus=2)"), "{text}");
        let words: Vec<&str> = text.split(' ').collect();
        assert_eq!(words[5].len(), 2, "day of month zero padded: {text}");
        assert_eq!(words[6], "at");
        let long = "(n:ncpus=1)+".repeat(100);
        let cut = run_comment(1_700_605_560, &long);
        assert_eq!(cut.len(), COMMENT_BUF_SIZE - 1);
        assert!(cut.ends_with("..."));
    }
}
