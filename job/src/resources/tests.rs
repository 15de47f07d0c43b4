//! `ResourceRequest::from_list` on the reference examples (pbs-reference section 3) and on
//! every error it reports. Parsed requests and error messages are insta snapshots.

use super::*;

fn request(list: &str) -> Result<ResourceRequest, ResourceError> {
    ResourceRequest::from_list(&parse_list(list).unwrap_or_else(|e| panic!("{list}: {e}")))
}

fn ok(list: &str) -> ResourceRequest {
    request(list).unwrap_or_else(|e| panic!("{list}: {e}"))
}

/// The display as `name=value` lines.
fn shown(request: &ResourceRequest) -> String {
    request.display.iter().map(|(name, value)| format!("{name}={value}\n")).collect()
}

#[test]
fn reference_example_nodes_ppn_gpus() {
    insta::assert_debug_snapshot!(ok("nodes=2:ppn=2:gpus=1"));
}

#[test]
fn reference_example_named_nodes() {
    insta::assert_debug_snapshot!(ok("nodes=node01:ppn=2+node02:ppn=2"));
}

#[test]
fn reference_example_two_parts() {
    insta::assert_debug_snapshot!(ok("nodes=2:ppn=2+1:ppn=4"));
}

#[test]
fn reference_example_property() {
    insta::assert_debug_snapshot!(ok("nodes=1:gpu"));
}

#[test]
fn reference_example_count_property_ppn() {
    insta::assert_debug_snapshot!(ok("nodes=4:blue:ppn=2"));
}

#[test]
fn reference_example_select() {
    insta::assert_debug_snapshot!(ok("select=2:ncpus=2:ngpus=1:mem=4gb"));
}

#[test]
fn reference_example_select_place_scatter_excl() {
    insta::assert_debug_snapshot!(ok("select=1:ncpus=4:mem=2gb,place=scatter:excl"));
}

#[test]
fn reference_example_job_wide() {
    insta::assert_debug_snapshot!(ok("ncpus=4,mem=2gb"));
}

#[test]
fn reference_totals_and_first_ppn() {
    // (list, hosts/chunks, slots, gpus, first_ppn, place)
    let cases = [
        ("nodes=2:ppn=2:gpus=1", 2, 4, 2, 2, Placement::Scatter),
        ("nodes=node01:ppn=2+node02:ppn=2", 2, 4, 0, 2, Placement::Scatter),
        ("nodes=2:ppn=2+1:ppn=4", 3, 8, 0, 2, Placement::Scatter),
        ("nodes=1:gpu", 1, 1, 0, 1, Placement::Scatter),
        ("nodes=4:blue:ppn=2", 4, 8, 0, 2, Placement::Scatter),
        ("select=2:ncpus=2:ngpus=1:mem=4gb", 2, 4, 2, 2, Placement::Free),
        ("select=1:ncpus=4:mem=2gb,place=scatter:excl", 1, 4, 0, 4, Placement::Scatter),
        ("ncpus=4,mem=2gb", 1, 4, 0, 4, Placement::Pack),
        ("walltime=1:00:00", 1, 1, 0, 1, Placement::Pack),
        ("ngpus=2", 1, 1, 2, 1, Placement::Pack),
        ("procs=6", 6, 6, 0, 1, Placement::Free),
        ("procs=3,place=scatter", 3, 3, 0, 1, Placement::Scatter),
        ("ncpus=2,place=excl", 1, 2, 0, 2, Placement::Pack),
        ("select=3:ncpus=1,place=pack", 3, 3, 0, 1, Placement::Pack),
        ("select=1:ncpus=2+2:ncpus=1", 3, 4, 0, 2, Placement::Free),
    ];
    for (list, nodect, ncpus, ngpus, first_ppn, place) in cases {
        let request = ok(list);
        let got = (request.nodect(), request.total_ncpus(), request.total_ngpus(), request.first_ppn, request.place);
        assert_eq!(got, (nodect, ncpus, ngpus, first_ppn, place), "{list}");
    }
}

#[test]
fn display_normalises_values() {
    let request = ok("walltime=1:00:00,nodes=2:ppn=2,mem=2G,cput=90:00,vmem=4096MB,software=\"a,b\",arch=linux");
    insta::assert_snapshot!(shown(&request), @r"
    arch=linux
    cput=01:30:00
    mem=2gb
    ncpus=4
    nodect=2
    nodes=2:ppn=2
    place=scatter
    select=2:ncpus=2:mem=1048576KB:mpiprocs=2
    software=a,b
    vmem=4096mb
    walltime=01:00:00
    ");
    assert_eq!(request.display_value("walltime"), Some("01:00:00"));
    assert_eq!(request.display_value("nope"), None);
    assert_eq!((request.walltime, request.cput), (Some(3600), Some(5400)));
}

#[test]
fn display_of_derived_values() {
    let cases = [
        ("nodes=2:ppn=2:gpus=1", "2:ncpus=2:ngpus=1:mpiprocs=2", "scatter", Some("2")),
        ("nodes=2:ppn=2#excl", "2:ncpus=2:mpiprocs=2", "scatter:excl", None),
        ("nodes=node01:ppn=2", "1:ncpus=2:node01=True:mpiprocs=2", "scatter", None),
        ("ncpus=4,mem=2gb,host=n3", "1:host=n3:mem=2gb:ncpus=4", "pack", None),
        ("mem=2GB,walltime=1:00:00,vmem=1gb", "1:mem=2gb:vmem=1gb", "pack", None),
        ("walltime=1:00:00", "1", "pack", None),
        ("arch=\"x:y\"", "1:arch=\"x:y\"", "pack", None),
        ("nodes=20", "20:ncpus=1", "scatter", None),
        ("nodes=1:ppn=20#shared", "1:ncpus=20:mpiprocs=20", "scatter:share", None),
        ("nodes=1:ncpus=16", "1:ncpus=16", "scatter", None),
        ("nodes=2#shared#excl", "2:ncpus=1", "scatter:excl", None),
        ("ncpus=2,ngpus=1,place=scatter", "1:ncpus=2:ngpus=1", "scatter", Some("1")),
        ("procs=3,mem=3000b", "3:ncpus=1:mem=1000b", "free", None),
        ("ngpus=0", "1:ngpus=0", "pack", None),
    ];
    for (list, select, place, ngpus) in cases {
        let request = ok(list);
        assert_eq!(request.display_value("select"), Some(select), "{list}");
        assert_eq!(request.display_value("place"), Some(place), "{list}");
        let shown_ngpus = request.display_value("ngpus").filter(|value| *value != "0");
        assert_eq!(shown_ngpus, ngpus, "{list}");
    }
    // A user's nodect is checked but the derived one is shown.
    assert_eq!(ok("nodes=3,nodect=1").display_value("nodect"), Some("3"));
}

/// OpenPBS keeps `select` and `place` as the user wrote them (`qstat -f` shows them so, and
/// programs parse it); the scheduler's form is `schedselect`.
#[test]
fn select_and_place_are_shown_as_written() {
    let cases = [
        (
            "select=1:ncpus=2:mem=2gb:ompthreads=2,place=excl",
            "1:ncpus=2:mem=2gb:ompthreads=2",
            "excl",
            "1:ncpus=2:mem=2gb:ompthreads=2",
        ),
        ("select=2:mem=8GB:ncpus=4", "2:mem=8GB:ncpus=4", "free", "2:mem=8GB:ncpus=4"),
        ("select=ncpus=2:mem=2g", "ncpus=2:mem=2g", "free", "1:ncpus=2:mem=2gb"),
        ("select=2:ncpus=1:host=n1:gpu=true", "2:ncpus=1:host=n1:gpu=true", "free", "2:ncpus=1:host=n1:gpu=True"),
        ("select=3,place=vscatter:exclhost", "3", "vscatter:exclhost", "3:ncpus=1"),
        ("select=1:ncpus=0", "1:ncpus=0", "free", "1:ncpus=0"),
        (
            "select=1:ngpus=1+2:mem=1024,place=excl:pack",
            "1:ngpus=1+2:mem=1024",
            "excl:pack",
            "1:ngpus=1:ncpus=1+2:mem=1024b:ncpus=1",
        ),
        ("nodes=2:ppn=2#excl", "2:ncpus=2:mpiprocs=2", "scatter:excl", "2:ncpus=2:mpiprocs=2"),
    ];
    for (list, select, place, sched) in cases {
        let request = ok(list);
        assert_eq!(request.display_value("select"), Some(select), "{list}");
        assert_eq!(request.display_value("place"), Some(place), "{list}");
        assert_eq!(request.display_value("select").map(schedselect), Some(sched.to_string()), "{list}");
    }
    // The scheduler reads the words: vscatter places each chunk on its own node.
    let request = ok("select=3,place=vscatter:exclhost");
    assert_eq!((request.place, request.exclusive), (Placement::Scatter, true));
}

/// The job-wide `mem` of a select is the sum of its chunks' as OpenPBS adds sizes.
#[test]
fn select_mem_total_keeps_the_unit() {
    let cases = [
        ("select=1:ncpus=2:mem=2gb", Some("2gb")),
        ("select=2:mem=4gb+1:ncpus=1", Some("8gb")),
        ("select=1:mem=2gb+1:mem=512MB", Some("2560mb")),
        ("select=2:mem=1000", Some("2000b")),
        ("select=1:mem=1000+1:mem=1kb", Some("2kb")),
        ("select=1:ncpus=1", None),
        ("select=2:mem=15eb", Some("18446744073709551615b")),
        ("ncpus=2,mem=2GB", Some("2gb")),
    ];
    for (list, mem) in cases {
        assert_eq!(ok(list).display_value("mem"), mem, "{list}");
    }
}

#[test]
fn omp_threads_follow_the_first_chunk() {
    let cases = [
        ("select=1:ncpus=8:ompthreads=2+1:ncpus=4:ompthreads=4", 2),
        ("select=1:ncpus=8+1:ncpus=4:ompthreads=4", 8),
        ("nodes=1:ppn=3", 3),
        ("ncpus=5", 5),
        ("select=1:ncpus=2:ompthreads=4294967295", u32::MAX),
    ];
    for (list, threads) in cases {
        assert_eq!(ok(list).omp_threads(), threads, "{list}");
    }
}

#[test]
fn nodes_mem_is_shared_per_chunk() {
    let request = ok("nodes=2:ppn=2+1:ppn=4,mem=3gb");
    let mems: Vec<Option<u64>> = request.chunks.iter().map(|chunk| chunk.mem).collect();
    assert_eq!(mems, vec![Some(1 << 30), Some(1 << 30)]);
    assert_eq!(request.display_value("mem"), Some("3gb"));
}

#[test]
fn last_value_of_a_repeated_name_wins() {
    let pairs = vec![("walltime".to_string(), "1:00:00".to_string()), ("walltime".to_string(), "2:00".to_string())];
    let request = ResourceRequest::from_list(&pairs).unwrap();
    assert_eq!(request.walltime, Some(120));
    assert_eq!(request.display.iter().filter(|(name, _)| *name == "walltime").count(), 1);
}

#[test]
fn empty_list_is_one_default_chunk() {
    let request = ResourceRequest::from_list(&[]).unwrap();
    assert_eq!(request.chunks.len(), 1);
    assert_eq!((request.total_ncpus(), request.place, request.first_ppn), (1, Placement::Pack, 1));
    assert_eq!(request.display_value("select"), Some("ncpus=1"), "OpenPBS's select of a job asking for nothing");
}

#[test]
fn unknown_resources_are_flagged() {
    for list in ["gpus=1", "Walltime=1:00:00", "foo=bar", "select=1:model=x"] {
        let err = request(list).expect_err(list);
        assert!(err.is_unknown_resource(), "{list}: {err}");
        assert!(err.message.starts_with("Unknown resource"), "{list}: {err}");
    }
}

#[test]
fn errors_name_resource_value_and_column() {
    let cases = [
        ("nodes=2:ppn=x", "nodes=2:ppn=x", 12, "x"),
        ("mem=1gb,nodes=0", "nodes=0", 6, "0"),
        ("nodes=1:gpus=abc", "nodes=1:gpus=abc", 13, "abc"),
        ("walltime=1:xx", "walltime=1:xx", 9, "1:xx"),
        ("mem=2.5gb", "mem=2.5gb", 4, "2.5gb"),
        ("ncpus=-1", "ncpus=-1", 6, "-1"),
        ("procs=0", "procs=0", 6, "0"),
        ("nodect=x", "nodect=x", 7, "x"),
        ("gpus=1", "gpus=1", 0, "gpus"),
        ("nodes=2,select=2", "nodes=2", 0, "nodes"),
        ("place=scatter,nodes=2", "nodes=2", 0, "nodes"),
        ("select=2:ncpus=1,ncpus=2", "ncpus=2", 0, "ncpus"),
        ("mem=2gb,select=2", "mem=2gb", 0, "mem"),
        ("select=2,ngpus=1", "ngpus=1", 0, "ngpus"),
        ("nodes=2:ppn=2,ncpus=4", "ncpus=4", 0, "ncpus"),
        ("procs=2,nodes=2", "procs=2", 0, "procs"),
        ("procs=2,ncpus=2", "ncpus=2", 0, "ncpus"),
        ("select=65536:ncpus=65536+1:ncpus=1", "select=65536:ncpus=65536+1:ncpus=1", 0, "select"),
    ];
    for (list, input, column, token) in cases {
        let err = request(list).expect_err(list);
        assert_eq!((err.input.as_str(), err.column, err.token.as_str()), (input, column, token), "{list}: {err}");
    }
}

#[test]
fn error_messages() {
    let lists = [
        "nodes=2:ppn=x",
        "nodes=0",
        "walltime=1:xx",
        "cput=-5",
        "mem=2.5gb",
        "ncpus=x",
        "gpus=1",
        "nodes=2,select=2",
        "select=2:ncpus=1,ncpus=2",
        "nodes=2:ppn=2,ngpus=4",
        "procs=2,select=1",
        "select=65536:ncpus=65536+1:ncpus=1",
    ];
    let text: String = lists
        .iter()
        .map(|list| {
            let err = request(list).unwrap_err();
            format!("{list}\n{err}\n{}\n\n", err.caret_display())
        })
        .collect();
    insta::assert_snapshot!(text);
}

#[test]
fn mps_shares_in_both_grammars() {
    let cases = [
        ("nodes=1:ppn=2:gpus=1:mps", Some(25)),
        ("nodes=1:mps:gpus=1", Some(25)),
        ("nodes=1:gpus=1:mps=50", Some(50)),
        ("nodes=1:mps=10", Some(10)),
        ("select=1:ncpus=1:ngpus=1:mps=25", Some(25)),
        ("select=ncpus=2:mps=100", Some(100)),
        ("nodes=1:gpus=1:shared", None),
    ];
    for (list, share) in cases {
        let request = ok(list);
        assert_eq!(request.mps_share(), share, "{list}");
        assert_eq!(request.total_ngpus(), 1, "{list}: an MPS share is one GPU");
    }
    insta::assert_snapshot!(shown(&ok("select=1:ncpus=1:mps=25")), @r"
    ncpus=1
    ngpus=1
    nodect=1
    place=free
    select=1:ncpus=1:mps=25
    ");
}

#[test]
fn mps_errors_name_the_value() {
    let errors: Vec<String> = [
        "nodes=1:gpus=1:mps=0",
        "nodes=1:gpus=1:mps=101",
        "nodes=1:gpus=1:mps:mps=5",
        "select=1:ngpus=1:mps=x",
        "nodes=2:gpus=1:mps",
        "nodes=1:gpus=2:mps=25",
        "nodes=1:gpus=1:mps+1:ppn=1",
        "select=1:ncpus=1:mps=25:mps=30",
    ]
    .iter()
    .map(|list| format!("{list}: {}", request(list).expect_err(list)))
    .collect();
    insta::assert_snapshot!(errors.join("\n"));
}

#[test]
fn chunk_specs_and_mpi_processes_are_bounded() {
    let parts = |count: usize, part: &str| vec![part; count].join("+");
    assert_eq!(ok(&format!("select={}", parts(MAX_CHUNK_SPECS, "1:ncpus=1"))).chunks.len(), MAX_CHUNK_SPECS);
    for name in ["select", "nodes"] {
        let list = format!("{name}={}+2", parts(MAX_CHUNK_SPECS, "1"));
        let error = request(&list).unwrap_err();
        let expected =
            format!("Illegal attribute or resource value Resource_List.{name}: more than 4096 chunks joined with '+'");
        assert_eq!((error.message.as_str(), error.token.as_str()), (expected.as_str(), "2"), "{name}");
        assert_eq!(error.column, list.len() - 1, "{name}: the column of the first part over the limit");
    }

    assert_eq!(ok("select=1024:ncpus=1:mpiprocs=1024").chunks[0].mpiprocs, 1024);
    let error = request("select=1:ncpus=1:mpiprocs=1048577").unwrap_err();
    assert_eq!(
        error.message,
        "Illegal attribute or resource value Resource_List.select: 1048577 MPI processes (mpiprocs over all chunks), more than the maximum of 1048576"
    );
    let error = request("nodes=1025:ppn=1024").unwrap_err();
    assert!(error.message.contains("1049600 MPI processes"), "{}", error.message);
    // A billion chunks of no cpus and no ranks is refused by the scheduler's check against the
    // cluster, not here: the parser does not know the nodes.
    assert_eq!(ok("select=1000000000:ncpus=0").chunks[0].mpiprocs, 0);
}

/// The largest select (MAX_CHUNK_SPECS chunks) gives a schedselect at most `:ncpus=1` longer
/// per chunk, and a memory total that overflows falls back to the saturated byte count.
#[test]
fn derived_displays_of_the_largest_select_are_bounded() {
    let select = vec!["1:mem=15eb"; MAX_CHUNK_SPECS].join("+");
    let request = ok(&format!("select={select}"));
    let derived = request.display_value("select").map(schedselect).unwrap();
    assert_eq!(derived.len(), select.len() + MAX_CHUNK_SPECS * ":ncpus=1".len());
    assert_eq!(request.display_value("mem"), Some("18446744073709551615b"));
}

#[test]
fn a_nodes_word_naming_a_node_is_a_host_in_the_select() {
    let pairs = parse_list("nodes=node1:ppn=2+Node2+1:gpu").unwrap();
    let is_node = |word: &str| ["node1", "node2"].iter().any(|name| name.eq_ignore_ascii_case(word));
    let request = ResourceRequest::from_list_at(&pairs, &Default::default(), &is_node).unwrap();
    let select = request.display_value("select");
    assert_eq!(select, Some("1:ncpus=2:host=node1:mpiprocs=2+1:ncpus=1:host=Node2+1:ncpus=1:gpu=True"));
    let unknown = ResourceRequest::from_list(&pairs).unwrap();
    assert_eq!(
        unknown.display_value("select"),
        Some("1:ncpus=2:node1=True:mpiprocs=2+1:ncpus=1:Node2=True+1:ncpus=1:gpu=True")
    );
}

#[test]
fn every_error_has_the_kind_its_text_says() {
    use ResourceErrorKind::{BadValue, Combination, Syntax, UnknownResource};
    let syntax = ["mem=1gb,,ncpus=1", "=1", "a='x"].map(|list| parse_list(list).unwrap_err());
    assert!(syntax.iter().all(|error| error.kind == Syntax), "{syntax:?}");
    let cases = [
        ("walltime=x", BadValue),
        ("nodes=0", BadValue),
        ("select=1:ncpus=x", BadValue),
        ("place=bogus", BadValue),
        ("nodes=1:gpus=2:mps", BadValue),
        ("nodes=1,select=1", Combination),
        ("procs=2,select=1", Combination),
        ("select=1,ncpus=2", Combination),
        ("foo=1", UnknownResource),
        ("select=1:model=x", UnknownResource),
    ];
    for (list, kind) in cases {
        let error = request(list).expect_err(list);
        assert_eq!(error.kind, kind, "{list}: {error}");
        // The texts the client matched before the kinds existed still say the same.
        assert_eq!(error.message.starts_with("Illegal attribute or resource value"), kind == BadValue, "{list}");
        assert_eq!(error.message.contains("cannot be used with"), kind == Combination, "{list}");
    }
}
