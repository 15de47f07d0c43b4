//! `/job/<id>`: one job's attributes as `qstat -f` shows them to a user who is neither its
//! owner nor an operator or manager. The filter is qstat's own (`handlers::status_job`'s
//! `statuses` with `Reader::Nobody`): no `Variable_List` (the environment), no command line,
//! no manager-only or invisible resources. The script is not in memory at all, and nothing is
//! read from a job's files: `Output_Path` is a path, shown as qstat shows it.
//!
//! Every value is HTML-escaped (`html-escape`): job names, comments and owners are the
//! user's text. The id in the path is bounded ([`MAX_ID_LEN`]) before it is looked up; an
//! unknown or over-long id is a 404 page. Finished jobs are shown too (as `qstat -fx`).

use crate::handlers::status_job::{statuses, Query, Reader};
use crate::state::ServerState;
use html_escape::encode_text;
use proto::JobStatus;

/// The longest job id looked up (`123456789[12345].a-long-server-name` fits many times over).
pub const MAX_ID_LEN: usize = 255;

/// The status of job `id` as a non-owner reads it, or `None` if there is no such job.
pub fn status(state: &ServerState, id: &str, now: i64) -> Option<JobStatus> {
    if id.len() > MAX_ID_LEN {
        return None;
    }
    let (key, _) = state.find_job_entry(id).ok()?;
    let query = Query { history: true, reader: Reader::Nobody, ..Query::default() };
    statuses(state, state.flavor, now, &query, &[key]).pop()
}

/// The page of one job.
pub fn render(status: &JobStatus) -> String {
    let mut rows = String::new();
    for attr in &status.attrs {
        rows.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n",
            encode_text(&attr.full_name()),
            encode_text(&attr.value)
        ));
    }
    let id = encode_text(&status.id);
    let body = format!(
        "<h1>Job {id}</h1>\n<p class=\"note\">What <code>qstat -f</code> shows to users other than \
         its owner.</p>\n<div class=\"scroll\"><table class=\"attrs\">\n{rows}</table></div>\n"
    );
    document(&format!("Job {id}"), &body)
}

/// The page of an id that names no job.
pub fn not_found(id: &str) -> String {
    let shown: String = id.chars().take(64).collect();
    let body = format!("<h1>Unknown job</h1>\n<p>No job {}.</p>\n", encode_text(&shown));
    document("Unknown job", &body)
}

/// A whole page around `body` (already escaped), one level below the cluster page.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<link rel=\"stylesheet\" href=\"../style.css\">\n</head>\n<body>\n\
         <header><a href=\"../\">&larr; cluster</a></header>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )
}

#[cfg(test)]
#[path = "job_page_tests.rs"]
mod tests;
