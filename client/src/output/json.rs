//! `qstat -f -F json` (OpenPBS, PBS reference section 6.5): one document with `timestamp`,
//! `pbs_version`, `pbs_server` and, when at least one job matched, `Jobs`.
//!
//! Owns: the shape of that document (resources as nested objects, `Variable_List` as an
//! object of variables, which values become numbers). Must not: read the clock (the caller
//! passes `timestamp`), talk to the server, or print. The layout itself is [`super::cjson`]'s.

use proto::JobStatus;

use super::cjson::{parse_value, Json};
use super::time::{ctime_text, display_value, TimeText};

/// Attributes that stay strings even when they look like numbers (a job named `42`).
const ALWAYS_STRINGS: &[&str] = &["Job_Name", "Account_Name", "project"];

/// `qstat -f -F json` with time stamps in local time. See [`qstat_json_with`].
pub fn qstat_json(server: &str, jobs: &[JobStatus], timestamp: i64, pbs_version: &str) -> String {
    qstat_json_with(server, jobs, timestamp, pbs_version, ctime_text)
}

/// `qstat -f -F json`: the whole document, ending in a newline. `timestamp` is the epoch time
/// of the query (a number), `server` the short server name. Each job is an object keyed by
/// its full id, holding its attributes in the order given: consecutive resource attributes
/// (`Resource_List.ncpus`, `Resource_List.walltime`) become one nested object, `Variable_List`
/// an object of its variables (`\,` unescaped), time stamps their `ctime` text through `time`,
/// and values that cJSON parses as JSON that type (`4` -> number), except [`ALWAYS_STRINGS`].
/// Without jobs the `Jobs` key is left out but the document is still printed.
pub fn qstat_json_with(server: &str, jobs: &[JobStatus], timestamp: i64, pbs_version: &str, time: TimeText) -> String {
    let mut root = vec![
        ("timestamp".to_string(), Json::Number(timestamp as f64)),
        ("pbs_version".to_string(), Json::String(pbs_version.to_string())),
        ("pbs_server".to_string(), Json::String(server.to_string())),
    ];
    if !jobs.is_empty() {
        let entries = jobs.iter().map(|job| (job.id.clone(), job_object(job, time))).collect();
        root.push(("Jobs".to_string(), Json::Object(entries)));
    }
    Json::Object(root).print() + "\n"
}

/// `qstat -Q -F json` / `qstat -B -F json`: the same document with the objects (queues, or
/// the server) under `label` (`Queue`, `Server`), each built as a job's object is.
pub fn qstat_objects_json(
    label: &str,
    server: &str,
    objects: &[proto::ObjectStatus],
    timestamp: i64,
    pbs_version: &str,
) -> String {
    let mut root = vec![
        ("timestamp".to_string(), Json::Number(timestamp as f64)),
        ("pbs_version".to_string(), Json::String(pbs_version.to_string())),
        ("pbs_server".to_string(), Json::String(server.to_string())),
    ];
    if !objects.is_empty() {
        let entries = objects
            .iter()
            .map(|object| {
                let status = JobStatus { id: object.name.clone(), attrs: object.attrs.clone() };
                (object.name.clone(), job_object(&status, ctime_text))
            })
            .collect();
        root.push((label.to_string(), Json::Object(entries)));
    }
    Json::Object(root).print() + "\n"
}

/// The object of one job.
fn job_object(job: &JobStatus, time: TimeText) -> Json {
    let mut entries: Vec<(String, Json)> = Vec::new();
    // The resource attribute (`Resource_List`) whose object is the last entry, if any.
    let mut open_group: Option<&str> = None;
    for attr in &job.attrs {
        let text = display_value(&attr.full_name(), &attr.value, time);
        let Some(resource) = &attr.resource else {
            open_group = None;
            let value = if attr.name == "Variable_List" { variables(&text) } else { typed(&attr.name, &text) };
            entries.push((attr.name.clone(), value));
            continue;
        };
        if open_group != Some(attr.name.as_str()) {
            entries.push((attr.name.clone(), Json::Object(Vec::new())));
            open_group = Some(&attr.name);
        }
        if let Some((_, Json::Object(group))) = entries.last_mut() {
            group.push((resource.clone(), typed(&attr.name, &text)));
        }
    }
    Json::Object(entries)
}

/// The JSON value of an attribute text: parsed when cJSON would parse it, else a string.
fn typed(name: &str, text: &str) -> Json {
    if ALWAYS_STRINGS.contains(&name) {
        return Json::String(text.to_string());
    }
    parse_value(text).unwrap_or_else(|| Json::String(text.to_string()))
}

/// `Variable_List` (`A=1,B=x\,y`) as an object (`{"A": 1, "B": "x,y"}`). Items are split at
/// commas not escaped by `\`, then at their first `=`; an item without `=` gets an empty
/// string, empty items are skipped.
fn variables(list: &str) -> Json {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut characters = list.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '\\' if characters.peek() == Some(&',') => {
                characters.next();
                current.push(',');
            }
            ',' => items.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    items.push(current);
    let entries = items
        .iter()
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once('=') {
            Some((key, value)) => (key.to_string(), typed("", value)),
            None => (item.clone(), Json::String(String::new())),
        })
        .collect();
    Json::Object(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples::{self, T0};
    use crate::output::time::ctime_text_utc;
    use job::Attr;
    use serde_json::Value;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
    }

    #[test]
    fn reference_example_byte_for_byte() {
        let attrs = vec![
            Attr::new("Job_Name", "myjob"),
            Attr::new("job_state", "F"),
            Attr::new("ctime", T0.to_string()),
            Attr::resource("Resource_List", "ncpus", "4"),
            Attr::resource("Resource_List", "select", "2:ncpus=2:mpiprocs=2"),
            Attr::resource("Resource_List", "walltime", "01:00:00"),
            Attr::new("Variable_List", "PBS_O_HOME=/home/alice,PBS_O_QUEUE=workq"),
            Attr::new("Exit_status", "0"),
        ];
        let jobs = [JobStatus { id: "123.head".into(), attrs }];
        let expected = r#"{
	"timestamp":	1700605560,
	"pbs_version":	"23.06.06",
	"pbs_server":	"head",
	"Jobs":	{
		"123.head":	{
			"Job_Name":	"myjob",
			"job_state":	"F",
			"ctime":	"Tue Nov 21 22:26:00 2023",
			"Resource_List":	{
				"ncpus":	4,
				"select":	"2:ncpus=2:mpiprocs=2",
				"walltime":	"01:00:00"
			},
			"Variable_List":	{
				"PBS_O_HOME":	"/home/alice",
				"PBS_O_QUEUE":	"workq"
			},
			"Exit_status":	0
		}
	}
}
"#;
        assert_eq!(qstat_json_with("head", &jobs, T0, "23.06.06", ctime_text_utc), expected);
    }

    #[test]
    fn without_jobs_the_document_has_no_jobs_key() {
        let text = qstat_json_with("head", &[], T0, "23.06.06", ctime_text_utc);
        assert_eq!(
            text,
            "{\n\t\"timestamp\":\t1700605560,\n\t\"pbs_version\":\t\"23.06.06\",\n\t\"pbs_server\":\t\"head\"\n}\n"
        );
        assert!(parse(&text).get("Jobs").is_none());
    }

    #[test]
    fn serde_json_reads_every_sample() {
        let text = qstat_json_with("head", &samples::all_jobs(), T0, "23.06.06", ctime_text_utc);
        let document = parse(&text);
        let jobs = document["Jobs"].as_object().map(|jobs| jobs.len());
        assert_eq!(jobs, Some(samples::all_jobs().len()));
        let running = &document["Jobs"]["123.head"];
        assert_eq!(running["Resource_List"]["ncpus"], Value::from(4));
        assert_eq!(running["Resource_List"]["mem"], Value::from("2gb"));
        assert_eq!(running["resources_used"]["walltime"], Value::from("00:12:31"));
        assert_eq!(running["session_id"], Value::from(24567));
        assert_eq!(running["Priority"], Value::from(0));
        assert_eq!(running["Rerunable"], Value::from("True"));
        assert_eq!(running["mtime"], Value::from("Tue Nov 21 22:26:11 2023"));
        assert_eq!(running["project"], Value::from("_pbs_project_default"));
        assert_eq!(document["Jobs"]["126.head"]["Exit_status"], Value::from(271));
    }

    #[test]
    fn variable_list_is_an_object_with_unescaped_commas() {
        let document = parse(&qstat_json_with("head", &[samples::running_job()], T0, "23.06.06", ctime_text_utc));
        let variables = &document["Jobs"]["123.head"]["Variable_List"];
        assert_eq!(variables["MY_LIST"], Value::from("a,b,c"));
        assert_eq!(variables["OMP_NUM_THREADS"], Value::from(2));
        assert_eq!(variables["PBS_O_PATH"], Value::from("/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin"));
        assert_eq!(variables.as_object().map(|v| v.len()), Some(12));
    }

    #[test]
    fn names_and_projects_stay_strings() {
        let attrs = vec![Attr::new("Job_Name", "42"), Attr::new("project", "7"), Attr::new("Account_Name", "1e3")];
        let text = qstat_json_with("head", &[JobStatus { id: "1.head".into(), attrs }], T0, "1", ctime_text_utc);
        let job = &parse(&text)["Jobs"]["1.head"];
        assert_eq!(job["Job_Name"], Value::from("42"));
        assert_eq!(job["project"], Value::from("7"));
        assert_eq!(job["Account_Name"], Value::from("1e3"));
    }

    #[test]
    fn variables_split_only_at_unescaped_commas() {
        let expected = Json::Object(vec![
            ("A".into(), Json::Number(1.0)),
            ("B".into(), Json::String("x,y=z".into())),
            ("C".into(), Json::String(String::new())),
        ]);
        assert_eq!(variables("A=1,B=x\\,y=z,,C"), expected);
    }

    #[test]
    fn estimates_are_one_object_with_the_start_as_ctime_text() {
        let text = qstat_json_with("head", &[samples::planned_job()], T0, "23.06.06", ctime_text_utc);
        let expected = "\t\t\t\"estimated\":\t{\n\t\t\t\t\"exec_vnode\":\t\"(node1:ncpus=4)\",\n\t\t\t\t\"start_time\":\t\"Tue Nov 21 23:26:00 2023\"\n\t\t\t},\n\t\t\t\"project\"";
        assert!(text.contains(expected), "{text}");
    }

    #[test]
    fn snapshot_pinned() {
        insta::assert_snapshot!(qstat_json_with("head", &[samples::pinned_job()], T0, "23.06.06", ctime_text_utc));
    }

    #[test]
    fn snapshot_all_jobs() {
        insta::assert_snapshot!(qstat_json_with("head", &samples::all_jobs(), T0, "23.06.06", ctime_text_utc));
    }
}
