//! `qstat -x` in the torque flavor: TORQUE's XML document (PBS reference section 6.6).
//!
//! ```text
//! <?xml version="1.0"?>
//! <Data><Job><Job_Id>123.head</Job_Id><Job_Name>myjob</Job_Name>...<Resource_List><walltime>01:00:00</walltime></Resource_List>...</Job></Data>
//! ```
//!
//! Owns: that document: one `<Job>` per job with `<Job_Id>` first, one element per attribute
//! in the order given, resources nested under their attribute name (consecutive resources of
//! one attribute share the element, as in TORQUE's `create_full_job_xml`), values escaped,
//! time stamps left as the epoch numbers the server sends, no white space between elements.
//! Must not: choose, rename or reorder attributes, talk to the server, or print.

use proto::JobStatus;

/// The XML declaration line TORQUE prints first.
pub const XML_DECLARATION: &str = "<?xml version=\"1.0\"?>\n";

/// The whole `qstat -x` output: the declaration line, then the `<Data>` document on one line.
/// With no job the document is `<Data></Data>` (TORQUE prints an empty document too).
pub fn qstat_xml(jobs: &[JobStatus]) -> String {
    let mut out = String::from(XML_DECLARATION);
    out.push_str("<Data>");
    for job in jobs {
        push_job(&mut out, job);
    }
    out.push_str("</Data>\n");
    out
}

/// One `<Job>` element.
fn push_job(out: &mut String, job: &JobStatus) {
    out.push_str("<Job>");
    push_element(out, "Job_Id", &job.id);
    // The attribute element whose resources are being written, still open.
    let mut open: Option<&str> = None;
    for attr in &job.attrs {
        if open.is_some_and(|name| attr.resource.is_none() || name != attr.name) {
            close(out, open.take());
        }
        match &attr.resource {
            Some(resource) => {
                if open.is_none() {
                    out.push_str(&format!("<{}>", attr.name));
                    open = Some(&attr.name);
                }
                push_element(out, resource, &attr.value);
            }
            None => push_element(out, &attr.name, &attr.value),
        }
    }
    close(out, open);
    out.push_str("</Job>");
}

fn close(out: &mut String, open: Option<&str>) {
    if let Some(name) = open {
        out.push_str(&format!("</{name}>"));
    }
}

/// `<name>value</name>` with the value escaped.
fn push_element(out: &mut String, name: &str, value: &str) {
    out.push_str(&format!("<{name}>{}</{name}>", escape(value)));
}

/// Text made safe inside an element: the five XML entities, and characters XML 1.0 cannot
/// carry at all (control characters other than TAB, LF and CR) replaced by U+FFFD.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for character in value.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(character),
            c if c.is_control() && (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;
    use job::Attr;

    #[test]
    fn empty_listing_is_an_empty_document() {
        assert_eq!(qstat_xml(&[]), "<?xml version=\"1.0\"?>\n<Data></Data>\n");
    }

    #[test]
    fn reference_shape_byte_for_byte() {
        let job = JobStatus {
            id: "123.head".into(),
            attrs: vec![
                Attr::new("Job_Name", "myjob"),
                Attr::resource("Resource_List", "nodes", "1:ppn=2"),
                Attr::resource("Resource_List", "walltime", "01:00:00"),
                Attr::new("ctime", "1700605560"),
                Attr::resource("Walltime", "Remaining", "3540"),
                Attr::new("exit_status", "0"),
            ],
        };
        assert_eq!(
            qstat_xml(&[job]),
            "<?xml version=\"1.0\"?>\n<Data><Job><Job_Id>123.head</Job_Id><Job_Name>myjob</Job_Name>\
             <Resource_List><nodes>1:ppn=2</nodes><walltime>01:00:00</walltime></Resource_List>\
             <ctime>1700605560</ctime><Walltime><Remaining>3540</Remaining></Walltime>\
             <exit_status>0</exit_status></Job></Data>\n"
        );
    }

    #[test]
    fn a_new_resource_group_closes_the_previous_one() {
        let job = JobStatus {
            id: "1.h".into(),
            attrs: vec![
                Attr::resource("resources_used", "cput", "00:00:01"),
                Attr::resource("Resource_List", "mem", "1gb"),
            ],
        };
        let text = qstat_xml(&[job]);
        assert!(
            text.contains("<resources_used><cput>00:00:01</cput></resources_used><Resource_List><mem>1gb</mem>"),
            "{text}"
        );
    }

    #[test]
    fn values_are_escaped() {
        assert_eq!(escape("a<b & c>d \"e\" 'f'"), "a&lt;b &amp; c&gt;d &quot;e&quot; &apos;f&apos;");
        assert_eq!(escape("tab\there\x0cform\x01"), "tab\there\u{FFFD}form\u{FFFD}");
        assert_eq!(escape("plain=1,b\\,c"), "plain=1,b\\,c");
    }

    #[test]
    fn the_document_is_one_line_after_the_declaration() {
        let text = qstat_xml(&samples::torque_jobs());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "<?xml version=\"1.0\"?>");
        assert!(lines[1].starts_with("<Data><Job><Job_Id>") && lines[1].ends_with("</Job></Data>"));
        assert_eq!(lines[1].matches("<Job>").count(), samples::torque_jobs().len());
    }

    #[test]
    fn snapshot_torque_jobs() {
        insta::assert_snapshot!(qstat_xml(&samples::torque_jobs()));
    }
}
