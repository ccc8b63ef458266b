//! deploy/lab.sh: two hosts in network namespaces, each with its own MariaDB and agent;
//! sysbench's sharded topology runs through them, and `down` leaves nothing behind.

use std::process::Command;

use fleetbench_tests::{Scratch, bin, fleetbench};

struct Lab {
    dir: std::path::PathBuf,
    script: std::path::PathBuf,
}

impl Lab {
    fn sh(&self, args: &[&str]) -> std::process::Output {
        let bin_dir = bin("fleetbench-agent").parent().unwrap().to_path_buf();
        Command::new(&self.script)
            .args(args)
            .env("FLEETBENCH_LAB_DIR", &self.dir)
            .env("FLEETBENCH_BIN", bin_dir)
            .output()
            .expect("run deploy/lab.sh")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.sh(&["down"]);
    }
}

#[test]
fn the_lab_runs_a_sharded_topology_and_cleans_up() {
    let scratch = Scratch::new("lab");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let lab = Lab {
        dir: scratch.path("lab"),
        script: root.join("deploy/lab.sh"),
    };
    let up = lab.sh(&["up", "master", "slave"]);
    assert!(
        up.status.success(),
        "lab up: {}{}",
        String::from_utf8_lossy(&up.stdout),
        String::from_utf8_lossy(&up.stderr)
    );
    let env = String::from_utf8_lossy(&lab.sh(&["env"]).stdout).to_string();
    let var = |k: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing in {env}"))
            .to_string()
    };
    let (master, slave, agents, token) = (
        var("LAB_IP_master"),
        var("LAB_IP_slave"),
        var("LAB_AGENTS"),
        var("LAB_TOKEN_FILE"),
    );
    let targets = [
        format!("--target=master=mysql://sbtest:sbtest-pw@{master}:3306/sbtest"),
        format!("--target=slave=mysql://sbtest:sbtest-pw@{slave}:3306/sbtest"),
        "--table-map=sbtest1-2=master,sbtest3-4=slave".into(),
        "--tables=4".into(),
        "--table-size=500".into(),
        format!("--agents={agents}"),
        format!("--token-file={token}"),
    ];
    let run = |cmd: &[&str]| {
        let mut a: Vec<&str> = vec!["oltp_read_write"];
        a.extend(targets.iter().map(String::as_str));
        a.extend_from_slice(cmd);
        let out = fleetbench(&a);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    run(&["--threads=2", "prepare"]);
    let text = run(&["--threads=4", "--events=200", "--time=0", "run"]);
    assert!(
        text.contains(&format!("master ({master}:3306)"))
            && text.contains(&format!("slave ({slave}:3306)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{master}:7600")) && text.contains(&format!("{slave}:7600")),
        "{text}"
    );
    run(&["cleanup"]);
    let down = lab.sh(&["down"]);
    assert!(down.status.success());
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ns.stdout).contains("fblab-"),
        "namespaces left behind"
    );
    assert!(!lab.dir.exists(), "state left behind");
}
