//! `qstat -Q`, `-Q -f`, `-q`, `-B` and `-B -f` in OpenPBS's layouts (pbs-reference 6.8):
//! names `%-16s` (a longer name is cut to 15 characters and `*`), counts `%5s`, yes/no
//! columns `%3s`, then the full displays as `Queue: name` / `Server: name` blocks.
//!
//! Must not: talk to the server or choose which queues to show (callers pass them).

use proto::ObjectStatus;
use std::fmt::Write;

/// The job counts of `state_count` (`Transit:0 Queued:1 ...`), by state name.
fn count(status: &ObjectStatus, state: &str) -> u64 {
    let counts = status.get("state_count").unwrap_or_default();
    counts
        .split_whitespace()
        .filter_map(|item| item.split_once(':'))
        .find(|(name, _)| *name == state)
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0)
}

/// A name in a 16-wide column: longer names are cut and end in `*`.
fn name16(name: &str) -> String {
    if name.chars().count() > 16 {
        format!("{}*", name.chars().take(15).collect::<String>())
    } else {
        name.to_string()
    }
}

fn yes_no(value: Option<&str>) -> &'static str {
    if value == Some("True") {
        "yes"
    } else {
        "no"
    }
}

/// The total of a queue's `max_run` (`[o:PBS_ALL=N]` or a plain number), 0 when none.
fn max_run(status: &ObjectStatus) -> String {
    let value = status.get("max_run").or_else(|| status.get("max_running")).unwrap_or("0");
    value
        .split(',')
        .find_map(|entry| {
            let entry = entry.trim();
            entry.parse::<u64>().ok().or_else(|| entry.strip_prefix("[o:PBS_ALL=")?.strip_suffix(']')?.parse().ok())
        })
        .unwrap_or(0)
        .to_string()
}

/// `qstat -Q`.
pub fn qstat_queues(queues: &[ObjectStatus]) -> String {
    let mut out = String::from(
        "Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type\n\
         ---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ----\n",
    );
    for queue in queues {
        let _ = writeln!(
            out,
            "{:<16} {:>5} {:>5} {:>3} {:>3} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:<4}",
            name16(&queue.name),
            max_run(queue),
            queue.get("total_jobs").unwrap_or("0"),
            yes_no(queue.get("enabled")),
            yes_no(queue.get("started")),
            count(queue, "Queued"),
            count(queue, "Running"),
            count(queue, "Held"),
            count(queue, "Waiting"),
            count(queue, "Transit"),
            count(queue, "Exiting"),
            "Exec"
        );
    }
    out
}

/// `qstat -q`: the older limits table, with run and queued totals. Columns as OpenPBS prints
/// them: the name in 16, memory right-aligned in the next 7, durations cut to 8 characters
/// (`336:00:0`), missing limits as centred `--`.
pub fn qstat_queue_limits(server: &str, queues: &[ObjectStatus]) -> String {
    let mut out = format!(
        "\nserver: {server}\n\n\
         Queue            Memory CPU Time Walltime Node   Run   Que   Lm  State\n\
         ---------------- ------ -------- -------- ---- ----- ----- ----  -----\n"
    );
    let (mut running, mut queued) = (0, 0);
    for queue in queues {
        // Missing limits are centred dashes, as OpenPBS prints them.
        let limit = |name: &str, missing: &str| queue.get(name).unwrap_or(missing).to_string();
        let lm = match max_run(queue).as_str() {
            "0" => "--".to_string(),
            other => other.to_string(),
        };
        let (run, que) = (count(queue, "Running"), count(queue, "Queued"));
        running += run;
        queued += que;
        let _ = writeln!(
            out,
            "{:<16.16}{:>7} {:>8.8} {:>8.8} {:>4.4} {:>5} {:>5} {:>4.4}   {} {}",
            queue.name,
            limit("resources_max.mem", "  --  "),
            limit("resources_max.cput", "   --   "),
            limit("resources_max.walltime", "   --   "),
            limit("resources_max.nodect", " -- "),
            run,
            que,
            lm,
            if queue.get("enabled") == Some("True") { 'E' } else { 'D' },
            if queue.get("started") == Some("True") { 'R' } else { 'S' },
        );
    }
    let pad = " ".repeat(47);
    let _ = write!(out, "{pad}----- -----\n{pad}{running:>5} {queued:>5}\n");
    out
}

/// `qstat -B`.
pub fn qstat_server(server: &ObjectStatus) -> String {
    let mut out = String::from(
        "Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n\
         ---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------\n",
    );
    let _ = writeln!(
        out,
        "{:<16} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {}",
        name16(&server.name),
        0,
        server.get("total_jobs").unwrap_or("0"),
        count(server, "Queued"),
        count(server, "Running"),
        count(server, "Held"),
        count(server, "Waiting"),
        count(server, "Transit"),
        count(server, "Exiting"),
        server.get("server_state").unwrap_or("Active"),
    );
    out
}

/// `qstat -Q -f` (`label` = `Queue`) and `qstat -B -f` (`label` = `Server`).
pub fn qstat_objects_full(label: &str, objects: &[ObjectStatus]) -> String {
    let mut out = String::new();
    for object in objects {
        let _ = writeln!(out, "{label}: {}", object.name);
        for attr in &object.attrs {
            let _ = writeln!(out, "    {} = {}", attr.full_name(), attr.value);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use insta::assert_snapshot;
    use job::Attr;

    fn queue(name: &str, max_run: Option<&str>, enabled: &str, counts: &str, total: &str) -> ObjectStatus {
        let mut attrs = vec![
            Attr::new("queue_type", "Execution"),
            Attr::new("total_jobs", total),
            Attr::new("state_count", counts),
        ];
        if let Some(max_run) = max_run {
            attrs.push(Attr::new("max_run", max_run));
        }
        attrs.push(Attr::resource("resources_max", "walltime", "24:00:00"));
        attrs.push(Attr::new("enabled", enabled));
        attrs.push(Attr::new("started", "True"));
        ObjectStatus { name: name.into(), attrs }
    }

    fn sample() -> Vec<ObjectStatus> {
        vec![
            queue("workq", None, "True", "Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0 Begun:0 ", "3"),
            queue(
                "a_very_long_queue_name",
                Some("[o:PBS_ALL=10],[u:PBS_GENERIC=2]"),
                "False",
                "Transit:0 Queued:20 Held:1 Waiting:0 Running:2 Exiting:1 Begun:0 ",
                "24",
            ),
        ]
    }

    #[test]
    fn queue_summary() {
        assert_snapshot!(qstat_queues(&sample()));
    }

    #[test]
    fn queue_limits_table() {
        let mut queues = sample();
        queues[1].attrs.push(Attr::resource("resources_max", "mem", "16384gb"));
        queues[1].attrs.push(Attr::resource("resources_max", "nodect", "2"));
        queues[1].attrs.retain(|attr| attr.full_name() != "resources_max.walltime");
        queues[1].attrs.push(Attr::resource("resources_max", "walltime", "336:00:00"));
        assert_snapshot!(qstat_queue_limits("head", &queues));
    }

    #[test]
    fn server_summary_and_full() {
        let server = ObjectStatus {
            name: "head".into(),
            attrs: vec![
                Attr::new("server_state", "Active"),
                Attr::new("total_jobs", "3"),
                Attr::new("state_count", "Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0 Begun:0 "),
                Attr::new("default_queue", "workq"),
            ],
        };
        assert_snapshot!(format!(
            "{}\n{}",
            qstat_server(&server),
            qstat_objects_full("Server", std::slice::from_ref(&server))
        ));
    }

    #[test]
    fn queue_json() {
        let text = crate::output::json::qstat_objects_json("Queue", "head", &sample()[..1], 1700000000, "0.1.0");
        assert_snapshot!(text);
    }

    #[test]
    fn queue_full() {
        assert_snapshot!(qstat_objects_full("Queue", &sample()[..1]));
    }
}
