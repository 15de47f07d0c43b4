//! Handler tests of site-defined resources: qmgr create/delete/set resource (managers only),
//! node values, status, and jobs asking for them at submit and in a scheduling pass.

use super::manage::manage;
use super::status_node::status_node;
use super::status_resource::status_resource;
use super::tests::{cluster, requester, spec, submit, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreOp;
use proto::error::ErrorCode;
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::ServerReply;

fn attr(name: &str, resource: Option<&str>, value: &str) -> AttrOp {
    AttrOp { name: name.into(), resource: resource.map(str::to_string), op: SetOp::Set, value: value.into() }
}

fn qmgr(
    state: &mut ServerState,
    uid: u32,
    op: ManageOp,
    kind: ObjectKind,
    name: &str,
    attrs: &[AttrOp],
) -> Result<Outbox, (ErrorCode, String)> {
    let mut out = Outbox::default();
    match manage(state, &mut out, &requester(uid), 30, op, kind, name, attrs) {
        ServerReply::Done { errors } if errors.is_empty() => Ok(out),
        ServerReply::Error(error) => {
            assert!(out.persist.is_empty(), "a refused command persists nothing");
            Err((error.code, error.message))
        }
        other => panic!("{other:?}"),
    }
}

fn create(state: &mut ServerState, name: &str, kind: &str, flags: &str) -> Result<Outbox, (ErrorCode, String)> {
    let attrs = [attr("type", None, kind), attr("flag", None, flags)];
    qmgr(state, 0, ManageOp::Create, ObjectKind::Resource, name, &attrs)
}

fn set_node(state: &mut ServerState, node: &str, resource: &str, value: &str) -> Result<Outbox, (ErrorCode, String)> {
    qmgr(state, 0, ManageOp::Set, ObjectKind::Node, node, &[attr("resources_available", Some(resource), value)])
}

fn refused(state: &mut ServerState, resources: &[(&str, &str)]) -> (ErrorCode, String) {
    match submit_job::submit_job(state, &mut Outbox::default(), &requester(ALICE), 10, spec(resources)) {
        ServerReply::Error(error) => (error.code, error.message),
        other => panic!("{resources:?} accepted: {other:?}"),
    }
}

#[test]
fn managers_define_resources_and_everyone_else_is_refused() {
    let mut state = cluster(1);
    let user = qmgr(&mut state, ALICE, ManageOp::Create, ObjectKind::Resource, "gpu_type", &[]);
    assert_eq!(user.map(|_| ()).unwrap_err().0, ErrorCode::PermissionDenied);
    let out = create(&mut state, "gpu_type", "string", "h").unwrap();
    assert!(out.persist.iter().any(|op| matches!(op, StoreOp::PutResourceDef(def) if def.flags == "h")));
    assert_eq!(create(&mut state, "gpu_type", "long", "").unwrap_err().0, ErrorCode::DuplicateEntry);
    assert_eq!(create(&mut state, "mem", "size", "").unwrap_err().0, ErrorCode::DuplicateEntry);
    assert_eq!(create(&mut state, "9lives", "long", "").unwrap_err().0, ErrorCode::BadAttributeValue);
    assert_eq!(create(&mut state, "x", "colour", "").unwrap_err().0, ErrorCode::BadAttributeValue);
    let (code, message) = create(&mut state, "scratch", "size", "n").unwrap_err();
    assert_eq!(
        (code, message.as_str()),
        (ErrorCode::BadAttributeValue, "Erroneous to have flag 'n' without 'h' on resource \"scratch\".")
    );
    create(&mut state, "scratch", "size", "nh").unwrap();
    let ServerReply::Objects { objects, errors } = status_resource(&state, &requester(0), &[]) else { panic!() };
    assert!(errors.is_empty());
    let listed: Vec<String> =
        objects.iter().map(|o| format!("{} {} {}", o.name, o.get("type").unwrap(), o.get("flag").unwrap())).collect();
    assert_eq!(listed, ["gpu_type string h", "scratch size hn"]);
    let ServerReply::Objects { errors, .. } = status_resource(&state, &requester(0), &["nosuch".into()]) else {
        panic!()
    };
    assert_eq!(errors[0].code, ErrorCode::UnknownResource);
}

#[test]
fn node_values_are_checked_shown_and_matched() {
    let mut state = cluster(3);
    create(&mut state, "gpu_type", "string", "h").unwrap();
    create(&mut state, "bigmem", "boolean", "h").unwrap();
    let (code, message) = set_node(&mut state, "node2", "colour", "red").unwrap_err();
    assert_eq!((code, message.as_str()), (ErrorCode::UnknownResource, "Unknown resource resources_available.colour"));
    assert_eq!(set_node(&mut state, "node2", "bigmem", "perhaps").unwrap_err().0, ErrorCode::BadAttributeValue);
    let out = set_node(&mut state, "node2", "gpu_type", "a100").unwrap();
    assert!(out.persist.iter().any(|op| matches!(op, StoreOp::SetNodeResources { node, .. } if node == "node2")));
    set_node(&mut state, "node3", "gpu_type", "v100").unwrap();
    set_node(&mut state, "node1", "bigmem", "true").unwrap();
    let ServerReply::Nodes { nodes, .. } = status_node(&state, &requester(0), &["node2".into(), "node1".into()]) else {
        panic!()
    };
    assert_eq!(nodes[0].get("resources_available.gpu_type"), Some("a100"));
    assert_eq!(nodes[1].get("resources_available.bigmem"), Some("True"));
    assert_eq!(nodes[1].get("resources_available.vnode"), Some("node1"));

    let wanted = submit(&mut state, ALICE, &[("select", "1:ngpus=1:gpu_type=a100")]);
    let not_big = submit(&mut state, ALICE, &[("select", "1:ncpus=4:bigmem=false")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let ran_on = |id: &str| {
        state.jobs()[&state.find_job(id).unwrap()].exec.iter().map(|share| share.node.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ran_on(&wanted), ["node2"]);
    // node1 is bigmem, node2 has 3 cpus left: the first node without bigmem that fits.
    assert_eq!(ran_on(&not_big), ["node3"]);
}

#[test]
fn requests_name_only_defined_resources_and_values_some_node_has() {
    let mut state = cluster(2);
    assert_eq!(
        refused(&mut state, &[("gpu_type", "a100")]),
        (ErrorCode::UnknownResource, "Unknown resource Resource_List.gpu_type".into())
    );
    assert_eq!(
        refused(&mut state, &[("select", "1:gpu_type=a100")]),
        (ErrorCode::UnknownResource, "Unknown resource: gpu_type".into())
    );
    create(&mut state, "gpu_type", "string", "h").unwrap();
    set_node(&mut state, "node1", "gpu_type", "a100").unwrap();
    submit(&mut state, ALICE, &[("select", "1:gpu_type=a100")]);
    let (code, message) = refused(&mut state, &[("select", "1:gpu_type=h100")]);
    assert_eq!(code, ErrorCode::ExceedsLimits);
    assert!(message.ends_with("(no node has gpu_type=h100)"), "{message}");
}

#[test]
fn a_resource_in_use_cannot_be_deleted_and_a_free_one_leaves_the_nodes() {
    let mut state = cluster(1);
    create(&mut state, "gpu_type", "string", "h").unwrap();
    create(&mut state, "qos", "string", "").unwrap();
    set_node(&mut state, "node1", "gpu_type", "a100").unwrap();
    submit(&mut state, ALICE, &[("select", "1:gpu_type=a100")]);
    let (code, message) = qmgr(&mut state, 0, ManageOp::Delete, ObjectKind::Resource, "gpu_type", &[]).unwrap_err();
    assert_eq!((code, message.as_str()), (ErrorCode::ResourceBusy, "Resource busy on job"));
    let retype = [attr("type", None, "long")];
    assert_eq!(
        qmgr(&mut state, 0, ManageOp::Set, ObjectKind::Resource, "gpu_type", &retype).unwrap_err().0,
        ErrorCode::ResourceBusy
    );
    // Nothing uses qos: deleted, and a node value of it would go with it.
    state.node_mut("node1").unwrap().site.insert("qos".into(), "x".into());
    let out = qmgr(&mut state, 0, ManageOp::Delete, ObjectKind::Resource, "qos", &[]).unwrap();
    assert!(out.persist.iter().any(|op| matches!(op, StoreOp::DeleteResourceDef(name) if name == "qos")));
    assert!(!state.nodes()["node1"].site.contains_key("qos"));
    assert!(state.resources.get("qos").is_none());
    let unknown = qmgr(&mut state, 0, ManageOp::Delete, ObjectKind::Resource, "qos", &[]).unwrap_err();
    assert_eq!(unknown.0, ErrorCode::UnknownResource);
}

#[test]
fn queues_default_and_limit_site_resources() {
    let mut state = cluster(1);
    create(&mut state, "qos", "string", "").unwrap();
    create(&mut state, "licenses", "long", "q").unwrap();
    create(&mut state, "scratch", "size", "hn").unwrap();
    // A consumable is counted on nodes: a request needs a node that has it.
    set_node(&mut state, "node1", "scratch", "16gb").unwrap();
    let set_queue = |state: &mut ServerState, name: &str, resource: &str, value: &str| {
        qmgr(state, 0, ManageOp::Set, ObjectKind::Queue, "workq", &[attr(name, Some(resource), value)])
    };
    assert_eq!(set_queue(&mut state, "resources_max", "licenses", "many").unwrap_err().0, ErrorCode::BadAttributeValue);
    assert_eq!(set_queue(&mut state, "resources_max", "colour", "red").unwrap_err().0, ErrorCode::UnknownResource);
    set_queue(&mut state, "resources_default", "qos", "normal").unwrap();
    set_queue(&mut state, "resources_max", "licenses", "4").unwrap();
    set_queue(&mut state, "resources_max", "scratch", "8GB").unwrap();
    assert_eq!(state.queues()["workq"].resources_max["scratch"], "8gb", "normalised by type");

    let id = submit(&mut state, ALICE, &[("licenses", "4")]);
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!(job.request.display_value("qos"), Some("normal"), "the queue default");
    assert_eq!(refused(&mut state, &[("licenses", "5")]).0, ErrorCode::ExceedsLimits);
    submit(&mut state, ALICE, &[("select", "2:ncpus=1:scratch=4gb")]);
    let (code, message) = refused(&mut state, &[("select", "3:ncpus=1:scratch=4gb")]);
    assert_eq!(code, ErrorCode::ExceedsLimits);
    assert!(message.contains("scratch over resources_max.scratch = 8gb"), "{message}");

    // Deleting a definition takes the queue's defaults and limits of it along.
    qmgr(&mut state, 0, ManageOp::Delete, ObjectKind::Resource, "qos", &[]).unwrap_err();
    state.forget_all_jobs_for_test();
    qmgr(&mut state, 0, ManageOp::Delete, ObjectKind::Resource, "qos", &[]).unwrap();
    assert!(state.queues()["workq"].resources_default.is_empty());
}

#[test]
fn resources_available_ncpus_sets_the_slots_as_qmgr_print_writes_it() {
    let mut state = cluster(1);
    set_node(&mut state, "node1", "ncpus", "2").unwrap();
    assert_eq!(state.nodes()["node1"].np, 2);
    let (code, _) = set_node(&mut state, "node1", "mem", "1gb").unwrap_err();
    assert_eq!(code, ErrorCode::UnknownResource, "built-ins other than ncpus come from the mom");
}

#[test]
fn qalter_knows_the_site_resources_too() {
    let mut state = cluster(2);
    create(&mut state, "gpu_type", "string", "h").unwrap();
    set_node(&mut state, "node2", "gpu_type", "a100").unwrap();
    let mut held = spec(&[("select", "1:ncpus=1")]);
    held.user_hold = true;
    let ServerReply::JobSubmitted { id } =
        submit_job::submit_job(&mut state, &mut Outbox::default(), &requester(ALICE), 10, held)
    else {
        panic!()
    };
    let alter = |state: &mut ServerState, select: &str| {
        let changes =
            proto::JobAlteration { resources: vec![("select".to_string(), select.to_string())], ..Default::default() };
        alter_job::alter_job(state, &mut Outbox::default(), &requester(ALICE), 50, std::slice::from_ref(&id), &changes)
    };
    assert!(
        matches!(alter(&mut state, "1:ncpus=1:gpu_type=a100"), ServerReply::Done { ref errors } if errors.is_empty())
    );
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!(job.request.chunks[0].properties, ["gpu_type=a100"]);
    let ServerReply::Done { errors } = alter(&mut state, "1:ncpus=1:colour=red") else { panic!() };
    assert_eq!(errors[0].message, "Unknown resource: colour");
}

#[test]
fn invisible_and_read_only_resources_are_for_operators_and_managers() {
    let mut state = cluster(1);
    create(&mut state, "secret", "string", "hi").unwrap();
    create(&mut state, "budget", "long", "r").unwrap();
    set_node(&mut state, "node1", "secret", "yes").unwrap();
    let (code, message) = refused(&mut state, &[("budget", "5")]);
    assert_eq!(
        (code, message.as_str()),
        (
            ErrorCode::ReadOnlyAttribute,
            "Cannot set attribute, read only or insufficient permission Resource_List.budget"
        )
    );
    let (code, message) = refused(&mut state, &[("select", "1:ncpus=1:secret=yes")]);
    assert_eq!(
        (code, message.as_str()),
        (ErrorCode::InvalidSelectResource, "Resource invalid in \"select\" specification: secret")
    );
    // An operator may.
    qmgr(&mut state, 0, ManageOp::Set, ObjectKind::Server, "", &[attr("operators", None, "user1000@*")]).unwrap();
    submit(&mut state, ALICE, &[("select", "1:ncpus=1:secret=yes"), ("budget", "5")]);
}

#[test]
fn consumable_amounts_are_held_shown_and_given_back() {
    use super::job_ended::job_ended;
    use proto::mom::JobObit;
    let mut state = cluster(1);
    create(&mut state, "scratch", "size", "nh").unwrap();
    set_node(&mut state, "node1", "scratch", "100gb").unwrap();
    let assigned = |state: &ServerState| {
        let ServerReply::Nodes { nodes, .. } = status_node(state, &requester(ALICE), &["node1".into()]) else {
            panic!()
        };
        nodes[0].get("resources_assigned.scratch").map(str::to_string)
    };
    assert_eq!(assigned(&state).as_deref(), Some("0kb"));
    let (code, message) = refused(&mut state, &[("select", "1:ncpus=1:scratch=101gb")]);
    assert_eq!(code, ErrorCode::ExceedsLimits);
    assert!(message.contains(&format!("needs scratch={}", 101u64 << 30)), "{message}");
    let first = submit(&mut state, ALICE, &[("select", "1:ncpus=1:scratch=60gb")]);
    let second = submit(&mut state, ALICE, &[("select", "1:ncpus=1:scratch=60gb")]);
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 1, "60gb + 60gb > 100gb");
    let (first_key, second_key) = (state.find_job(&first).unwrap(), state.find_job(&second).unwrap());
    assert_eq!(state.jobs()[&first_key].state(), ::job::JobState::Running);
    assert_eq!(assigned(&state).as_deref(), Some("62914560kb"));
    state.sanity_check();

    // A restart: the node's counts come back from the stored allocation alone.
    let text = crate::store::exec_hosts::encode(&state.jobs()[&first_key].exec).unwrap();
    assert!(text.ends_with(&format!("scratch={}", 60u64 << 30)), "{text}");
    let job = state.job_mut(first_key).unwrap();
    job.exec = crate::store::exec_hosts::decode(&text).unwrap();
    let share = job.exec[0].clone();
    let node = state.node_mut("node1").unwrap();
    node.release(first_key, &share);
    node.jobs.clear();
    assert!(node.site_assigned.is_empty());
    state.claim_shares_on("node1");
    assert_eq!(assigned(&state).as_deref(), Some("62914560kb"));
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 25), 0, "still held after the restart");

    let obit = JobObit { job_id: first.clone(), exit_status: 0, session_id: 7, ..Default::default() };
    job_ended(&mut state, &mut Outbox::default(), "node1", obit, 30);
    assert_eq!(assigned(&state).as_deref(), Some("0kb"));
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 40), 1);
    assert_eq!(state.jobs()[&second_key].state(), ::job::JobState::Running);
    state.sanity_check();
}

#[test]
fn server_level_consumables_block_until_given_back() {
    use super::job_ended::job_ended;
    use super::status_server::status_server;
    use proto::mom::JobObit;
    let mut state = cluster(1);
    create(&mut state, "lic", "long", "q").unwrap();
    let set_server = |state: &mut ServerState, resource: &str, value: &str| {
        qmgr(state, 0, ManageOp::Set, ObjectKind::Server, "", &[attr("resources_available", Some(resource), value)])
    };
    assert_eq!(set_server(&mut state, "colour", "1").unwrap_err().0, ErrorCode::UnknownResource);
    assert_eq!(set_server(&mut state, "lic", "many").unwrap_err().0, ErrorCode::BadAttributeValue);
    let out = set_server(&mut state, "lic", "4").unwrap();
    let stored = out.persist.iter().find_map(|op| match op {
        StoreOp::SetServerAttrs(pairs) => Some(pairs.clone()),
        _ => None,
    });
    let stored = stored.expect("server attributes stored");
    let queues: Vec<_> = out
        .persist
        .iter()
        .filter_map(|op| match op {
            StoreOp::PutQueue(queue) => Some(queue.clone()),
            _ => None,
        })
        .collect();
    assert!(stored.contains(&("resources_available.lic".into(), "4".into())), "{stored:?}");
    let shown = |state: &ServerState, name: &str| {
        let ServerReply::Objects { objects, .. } = status_server(state, &requester(ALICE)) else { panic!() };
        objects[0].get(name).map(str::to_string)
    };
    assert_eq!(shown(&state, "resources_assigned.lic").as_deref(), Some("0"));

    let first = submit(&mut state, ALICE, &[("lic", "3")]);
    let second = submit(&mut state, ALICE, &[("lic", "3")]);
    let small = submit(&mut state, ALICE, &[("lic", "1")]);
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 2, "3 + 1 of 4 licences");
    let state_of = |state: &ServerState, id: &str| state.jobs()[&state.find_job(id).unwrap()].state();
    assert_eq!(state_of(&state, &second), ::job::JobState::Queued);
    assert_eq!(state_of(&state, &small), ::job::JobState::Running);
    assert_eq!(shown(&state, "resources_assigned.lic").as_deref(), Some("4"));
    assert_eq!(shown(&state, "resources_available.lic").as_deref(), Some("4"));

    // A restart: the server value comes back from the stored pairs, the holds from the jobs.
    state.attrs.resources_available.clear();
    state.load_config(&queues, &stored).unwrap();
    assert_eq!(shown(&state, "resources_available.lic").as_deref(), Some("4"));
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 25), 0);

    let obit = JobObit { job_id: first.clone(), exit_status: 0, session_id: 7, ..Default::default() };
    job_ended(&mut state, &mut Outbox::default(), "node1", obit, 30);
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 40), 1);
    assert_eq!(state_of(&state, &second), ::job::JobState::Running);
}

#[test]
fn invisible_resources_are_shown_to_operators_and_managers_only() {
    use super::status_job::{status_job, Query, Reader};
    let mut state = cluster(1);
    create(&mut state, "secret", "string", "hi").unwrap();
    create(&mut state, "hush", "long", "i").unwrap();
    create(&mut state, "plain", "long", "").unwrap();
    set_node(&mut state, "node1", "secret", "yes").unwrap();
    qmgr(&mut state, 0, ManageOp::Set, ObjectKind::Server, "", &[attr("operators", None, "user1000@*")]).unwrap();
    submit(&mut state, ALICE, &[("hush", "2"), ("plain", "3")]);
    qmgr(&mut state, 0, ManageOp::Unset, ObjectKind::Server, "", &[attr("operators", None, "")]).unwrap();

    let job_attrs = |reader: Reader| {
        let query =
            Query { selectors: &[], history: false, users: &[], wanted: None, arrays: Default::default(), reader };
        let ServerReply::Jobs { jobs, .. } = status_job(&state, state.flavor, 20, query) else { panic!() };
        jobs[0].attrs.iter().map(|attr| attr.full_name()).collect::<Vec<_>>()
    };
    let names =
        |reader| job_attrs(reader).into_iter().filter(|name| name.starts_with("Resource_List.")).collect::<Vec<_>>();
    assert!(names(Reader::Operator).contains(&"Resource_List.hush".to_string()));
    let user = names(Reader::User(ALICE));
    assert!(
        !user.contains(&"Resource_List.hush".to_string()) && user.contains(&"Resource_List.plain".to_string()),
        "{user:?}"
    );

    let node_names = |uid| {
        let ServerReply::Nodes { nodes, .. } = status_node(&state, &requester(uid), &[]) else { panic!() };
        nodes[0].attrs.iter().map(|attr| attr.full_name()).collect::<Vec<_>>()
    };
    assert!(node_names(0).contains(&"resources_available.secret".to_string()));
    assert!(!node_names(ALICE).contains(&"resources_available.secret".to_string()));

    let listed = |uid| {
        let ServerReply::Objects { objects, .. } = status_resource(&state, &requester(uid), &[]) else { panic!() };
        objects.iter().map(|object| object.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(listed(0), ["hush", "plain", "secret"]);
    assert_eq!(listed(ALICE), ["plain"]);
    let ServerReply::Objects { errors, .. } = status_resource(&state, &requester(ALICE), &["secret".into()]) else {
        panic!()
    };
    assert_eq!(errors[0].code, ErrorCode::UnknownResource, "as if not defined");
}

/// A listing answered in rows (`status_job::rows`, what a plain `qstat` asks for) hides what
/// the records hide, by the same code: private attributes from other users, `schedselect` from
/// all but managers, invisible resources from users; and each value shown is the record's.
#[test]
fn rows_hide_what_records_hide() {
    use super::status_job::{rows, statuses, Query, Reader};
    use crate::config::Flavor;
    const BOB: u32 = 1001;
    for flavor in [Flavor::OpenPbs, Flavor::Torque] {
        let mut state = cluster(1);
        state.flavor = flavor;
        create(&mut state, "hush", "long", "i").unwrap();
        create(&mut state, "plain", "long", "").unwrap();
        qmgr(&mut state, 0, ManageOp::Set, ObjectKind::Server, "", &[attr("operators", None, "user1000@*")]).unwrap();
        submit(&mut state, ALICE, &[("hush", "2"), ("plain", "3")]);
        qmgr(&mut state, 0, ManageOp::Unset, ObjectKind::Server, "", &[attr("operators", None, "")]).unwrap();
        let names: Vec<String> = [
            "Job_Name",
            "Variable_List",
            "Submit_arguments",
            "submit_args",
            "init_work_dir",
            "schedselect",
            "Resource_List.hush",
            "Resource_List.plain",
        ]
        .map(str::to_string)
        .to_vec();
        let columns = crate::status::Columns::new(&names);
        let keys: Vec<::job::JobKey> = state.jobs().keys().copied().collect();
        for reader in [Reader::Nobody, Reader::User(ALICE), Reader::User(BOB), Reader::Operator, Reader::Manager] {
            let query = Query { wanted: Some(&names), reader, ..Default::default() };
            let row = &rows(&state, flavor, 20, &query, &columns, &keys)[0];
            let record = &statuses(&state, flavor, 20, &query, &keys)[0];
            let from_record: Vec<Option<&str>> = names.iter().map(|name| record.get(name)).collect();
            let from_row: Vec<Option<&str>> = row.values.iter().map(Option::as_deref).collect();
            assert_eq!((row.id.as_str(), &from_row), (record.id.as_str(), &from_record), "{reader:?}, {flavor}");
            let seen = |name: &str| from_row[names.iter().position(|asked| asked == name).unwrap()].is_some();
            let trusted = matches!(reader, Reader::Operator | Reader::Manager);
            assert!(seen("Job_Name") && seen("Resource_List.plain"), "{reader:?}, {flavor}");
            assert_eq!(seen("Variable_List"), trusted || reader == Reader::User(ALICE), "{reader:?}, {flavor}");
            assert_eq!(seen("schedselect"), reader == Reader::Manager && flavor == Flavor::OpenPbs, "{reader:?}");
            assert_eq!(seen("Resource_List.hush"), trusted, "{reader:?}, {flavor}");
        }
    }
}
