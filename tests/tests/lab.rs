//! deploy/lab.sh: hosts in network namespaces, each with its own MariaDB and agent;
//! sysbench's sharded topology runs through them, two labs with different names coexist,
//! `down` removes only what its own `up` made, and refuses a directory that is not a lab.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fleetbench_tests::{Scratch, bin, fleetbench};

struct Lab {
    dir: PathBuf,
    name: String,
    script: PathBuf,
}

impl Lab {
    /// A lab in `dir` named `tag` plus this process's id, so concurrent test runs differ.
    fn new(dir: PathBuf, tag: char) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        Lab {
            dir,
            name: format!("{tag}{}", std::process::id() % 10_000_000),
            script: root.join("deploy/lab.sh"),
        }
    }

    fn sh(&self, args: &[&str]) -> Output {
        let bin_dir = bin("fleetbench-agent").parent().unwrap().to_path_buf();
        Command::new(&self.script)
            .args(args)
            .env("FLEETBENCH_LAB_DIR", &self.dir)
            .env("FLEETBENCH_LAB_NAME", &self.name)
            .env("FLEETBENCH_BIN", bin_dir)
            .output()
            .expect("run deploy/lab.sh")
    }

    fn up(&self, hosts: &[&str]) {
        let mut args = vec!["up"];
        args.extend_from_slice(hosts);
        let up = self.sh(&args);
        assert!(up.status.success(), "lab up: {}", text(&up));
    }

    fn env(&self) -> String {
        String::from_utf8_lossy(&self.sh(&["env"]).stdout).to_string()
    }

    fn var(&self, k: &str) -> String {
        let env = self.env();
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing in {env}"))
            .to_string()
    }

    /// This lab's namespaces that exist now.
    fn namespaces(&self) -> Vec<String> {
        let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
        let prefix = format!("fblab-{}-", self.name);
        String::from_utf8_lossy(&ns.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&prefix))
            .map(str::to_string)
            .collect()
    }

    fn bridge_exists(&self) -> bool {
        Command::new("ip")
            .args(["link", "show", &format!("fb-{}", self.name)])
            .output()
            .unwrap()
            .status
            .success()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if self.dir.join(".fleetbench-lab").exists() {
            let _ = self.sh(&["down"]);
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_lab_runs_a_sharded_topology_and_cleans_up() {
    let scratch = Scratch::new("lab");
    let lab = Lab::new(scratch.path("lab"), 's');
    lab.up(&["master", "slave"]);
    let (master, slave, agents, token) = (
        lab.var("LAB_IP_master"),
        lab.var("LAB_IP_slave"),
        lab.var("LAB_AGENTS"),
        lab.var("LAB_TOKEN_FILE"),
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
    assert_eq!(lab.namespaces().len(), 2);
    let down = lab.sh(&["down"]);
    assert!(down.status.success(), "{}", self::text(&down));
    assert!(lab.namespaces().is_empty(), "namespaces left behind");
    assert!(!lab.bridge_exists(), "bridge left behind");
    assert!(!lab.dir.exists(), "state left behind");
}

#[test]
fn two_labs_coexist_and_down_touches_only_its_own() {
    let scratch = Scratch::new("lab2");
    let a = Lab::new(scratch.path("a"), 'a');
    let b = Lab::new(scratch.path("b"), 'b');
    // The same host name in both: the lab names keep them apart.
    a.up(&["db"]);
    b.up(&["db"]);
    let (ip_a, ip_b) = (a.var("LAB_IP_db"), b.var("LAB_IP_db"));
    let subnet = |ip: &str| ip.rsplit_once('.').unwrap().0.to_string();
    assert_ne!(subnet(&ip_a), subnet(&ip_b), "each lab has its own /24");
    assert_eq!(a.namespaces(), [format!("fblab-{}-db", a.name)]);
    assert_eq!(b.namespaces(), [format!("fblab-{}-db", b.name)]);

    // Another `up` in a's directory, or with a's name elsewhere, refuses and deletes nothing.
    let again = a.sh(&["up", "db"]);
    assert!(!again.status.success() && text(&again).contains("already up"));
    let same_name = Lab {
        dir: scratch.path("c"),
        name: a.name.clone(),
        script: a.script.clone(),
    };
    let clash = same_name.sh(&["up", "db"]);
    assert!(!clash.status.success(), "{}", text(&clash));
    assert!(text(&clash).contains("is up elsewhere"), "{}", text(&clash));
    assert!(!same_name.dir.exists(), "a refused up leaves no directory");
    assert!(a.bridge_exists() && a.namespaces().len() == 1);

    let down = a.sh(&["down"]);
    assert!(down.status.success(), "{}", text(&down));
    assert!(a.namespaces().is_empty() && !a.bridge_exists());
    assert!(!a.dir.exists());

    // b is untouched: its namespace, bridge and files are there and its agent answers.
    assert_eq!(b.namespaces().len(), 1);
    assert!(b.bridge_exists());
    let agents = fleetbench(&[
        "agents",
        &format!("--agents={ip_b}:7600"),
        &format!("--token-file={}", b.var("LAB_TOKEN_FILE")),
    ]);
    assert_eq!(agents.status.code(), Some(0), "{}", text(&agents));
    assert!(text(&agents).contains("idle"), "{}", text(&agents));
    let down = b.sh(&["down"]);
    assert!(down.status.success(), "{}", text(&down));
    assert!(b.namespaces().is_empty() && !b.bridge_exists());
}

#[test]
fn down_refuses_a_directory_that_is_not_a_lab() {
    let scratch = Scratch::new("notalab");
    let dir = scratch.path("precious");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("hosts"), "db 10.231.9.11\n").unwrap();
    std::fs::write(dir.join("sub/data"), "keep me").unwrap();
    let lab = Lab::new(dir.clone(), 'n');
    let down = lab.sh(&["down"]);
    assert!(!down.status.success(), "{}", text(&down));
    assert!(
        text(&down).contains("not a lab directory"),
        "{}",
        text(&down)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/data")).unwrap(),
        "keep me"
    );
    assert!(dir.join("hosts").exists());
    // Nor does `up` take over a directory that holds something else.
    let up = lab.sh(&["up", "db"]);
    assert!(!up.status.success(), "{}", text(&up));
    assert!(
        text(&up).contains("not an empty directory"),
        "{}",
        text(&up)
    );
    assert!(!dir.join(".fleetbench-lab").exists());
    assert!(lab.namespaces().is_empty());
}
