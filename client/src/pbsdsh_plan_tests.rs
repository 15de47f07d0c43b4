//! Tests of `pbsdsh_plan.rs`: targets for every option and the environment of each task.

use super::*;

fn nodes() -> Nodefile {
    Nodefile::parse("n1\nn1\nn2\nn2\n").unwrap()
}

fn none(_: &str) -> Vec<IpAddr> {
    Vec::new()
}

fn plan(selection: Selection) -> Result<Vec<usize>, PlanError> {
    targets(&nodes(), &selection, "7.s", none)
}

#[test]
fn targets_for_each_option() {
    assert_eq!(plan(Selection::default()), Ok(vec![0, 1, 2, 3]));
    assert_eq!(plan(Selection { unique: true, ..Selection::default() }), Ok(vec![0, 2]));
    assert_eq!(plan(Selection { copies: Some(2), ..Selection::default() }), Ok(vec![0, 1]));
    assert_eq!(plan(Selection { copies: Some(6), ..Selection::default() }), Ok(vec![0, 1, 2, 3, 0, 1]));
    assert_eq!(plan(Selection { copies: Some(3), unique: true, ..Selection::default() }), Ok(vec![0, 2, 0]));
    assert_eq!(plan(Selection { node: Some(3), ..Selection::default() }), Ok(vec![3]));
    assert_eq!(plan(Selection { node: Some(1), unique: true, ..Selection::default() }), Ok(vec![2]));
    assert_eq!(plan(Selection { host: Some("n2.example.com".into()), ..Selection::default() }), Ok(vec![2]));
}

#[test]
fn targets_refused_name_the_bound() {
    assert_eq!(plan(Selection { copies: Some(MAX_COPIES), ..Selection::default() }).unwrap().len(), MAX_COPIES);
    let errors = [
        plan(Selection { copies: Some(MAX_COPIES + 1), ..Selection::default() }).unwrap_err(),
        plan(Selection { node: Some(4), ..Selection::default() }).unwrap_err(),
        plan(Selection { node: Some(2), unique: true, ..Selection::default() }).unwrap_err(),
        plan(Selection { host: Some("n3".into()), ..Selection::default() }).unwrap_err(),
        user_env(&["A,1B=2".into()], false, &[], none_var).unwrap_err(),
    ];
    insta::assert_snapshot!(errors.map(|error| error.to_string()).join("\n"));
}

fn none_var(_: &str) -> Option<String> {
    None
}

fn render(envs: &[Vec<(String, String)>]) -> String {
    let line = |env: &Vec<(String, String)>| env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    envs.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// `nodes=2:ppn=2`: four tasks, two per host.
#[test]
fn env_of_each_task_for_two_nodes_of_two() {
    let vnodes = plan(Selection::default()).unwrap();
    let master = |name: &str| match name {
        "MASTER_ADDR" => Some("n1".to_string()),
        "MASTER_PORT" => Some("29511".to_string()),
        _ => None,
    };
    insta::assert_snapshot!(render(&task_env(&nodes(), &vnodes, false, master)), @r"
    RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 NODE_RANK=0 MASTER_ADDR=n1 MASTER_PORT=29511
    RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 NODE_RANK=0 MASTER_ADDR=n1 MASTER_PORT=29511
    RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 NODE_RANK=1 MASTER_ADDR=n1 MASTER_PORT=29511
    RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 NODE_RANK=1 MASTER_ADDR=n1 MASTER_PORT=29511
    ");
}

/// `pbsdsh -u torchrun ...`: torchrun reads its options from `PET_*`.
#[test]
fn env_of_unique_launch_feeds_torchrun() {
    let vnodes = plan(Selection { unique: true, ..Selection::default() }).unwrap();
    insta::assert_snapshot!(render(&task_env(&nodes(), &vnodes, true, none_var)), @r"
    RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 NODE_RANK=0 PET_NODE_RANK=0 PET_NNODES=2 PET_MASTER_ADDR=n1
    RANK=1 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 NODE_RANK=1 PET_NODE_RANK=1 PET_NNODES=2 PET_MASTER_ADDR=n1
    ");
    let one = plan(Selection { node: Some(3), ..Selection::default() }).unwrap();
    assert_eq!(
        render(&task_env(&nodes(), &one, false, none_var)),
        "RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 NODE_RANK=1"
    );
}

#[test]
fn user_variables_from_e_and_big_e() {
    let vars: Vec<(String, String)> = [("HOME", "/h"), ("PBS_JOBID", "7.s"), ("CUDA_VISIBLE_DEVICES", "0"), ("A", "1")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let own = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let listed = user_env(&["A,B=x=y".into(), "UNSET".into(), "C=".into()], false, &vars, own).unwrap();
    assert_eq!(render(&[listed]), "A=1 B=x=y C=");
    let everything = user_env(&["A=2".into()], true, &vars, own).unwrap();
    assert_eq!(render(std::slice::from_ref(&everything)), "HOME=/h A=2");
    let ours = vec![("RANK".to_string(), "0".to_string()), ("HOME".to_string(), "/x".to_string())];
    assert_eq!(render(&[merge(&everything, ours)]), "A=2 RANK=0 HOME=/x");
}
