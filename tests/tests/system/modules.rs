//! `module` in job scripts: the mom gives every job's bash the `module` function of the
//! node's modulecmd (`--modulecmd`) and a default `MODULEPATH` (`--modulepath`), so a script
//! can `module load mpi` from the sample tree; a job that brings its own MODULEPATH keeps it
//! (unless it runs as root: a root job takes only allow-listed variables, issue 12, item 9).

use std::time::Duration;
use tests::{bin_dir, Cluster, Shape};

#[test]
fn a_job_script_loads_modules_with_the_nodes_module_command() {
    let modulecmd = format!("--mom-arg=--modulecmd={}", bin_dir().join("modulecmd").display());
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../modules/modulefiles");
    let samples = samples.canonicalize().unwrap();
    let modulepath = format!("--mom-arg=--modulepath={}", samples.display());
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &[&modulecmd, &modulepath]);
    let script = cluster.script(
        "modules.sh",
        "#PBS -S /bin/bash\n\
         module load mpi; echo \"load=$? $LOADEDMODULES $MPI_IMPL\"\n\
         module switch mpi/openmpi; echo \"switch=$? $LOADEDMODULES $MPI_IMPL\"\n\
         module load nosuch 2>&1; echo \"nosuch=$?\"\n\
         bash -c 'module list -t 2>&1'\n",
    );
    let id = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let output = std::fs::read_to_string(cluster.work.path().join(format!("modules.sh.o{seq}"))).unwrap();
    assert_eq!(
        output,
        "load=0 mpi/mpich mpich\n\
         switch=0 mpi/openmpi openmpi\n\
         ERROR: Unable to locate a modulefile for 'nosuch'\n\
         nosuch=1\n\
         Currently Loaded Modulefiles:\n\
         mpi/openmpi\n"
    );
    // A job that brings its own MODULEPATH keeps it.
    let own = cluster.script("own.sh", "#PBS -S /bin/bash\necho \"[$MODULEPATH]\"\n");
    let id = cluster.qsub(&own, &["-v", "MODULEPATH=/site/modules"]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0);
    let seq = id.split('.').next().unwrap();
    let output = std::fs::read_to_string(cluster.work.path().join(format!("own.sh.o{seq}"))).unwrap();
    // Not a root job's (the tests' usual identity): it takes only allow-listed variables.
    let expected = match nix::unistd::geteuid().is_root() {
        true => format!("[{}]\n", samples.display()),
        false => "[/site/modules]\n".to_string(),
    };
    assert_eq!(output, expected);
}
