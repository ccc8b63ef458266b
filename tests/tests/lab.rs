//! deploy/lab.sh: hosts in network namespaces, each with its own MariaDB and agent, the
//! slave a real replica of the master; sysbench's sharded topology runs through them, and so
//! does the proxy case: OLTP through the proxy host's HAProxy on port 8066 reaches the
//! master's MariaDB and only it (the slave gets its writes by replication). A scenario run
//! loads the master with its replica read beside it and every host observed. Two labs
//! with different names coexist, `down` removes only what its own `up` made (HAProxy
//! included), and refuses a directory that is not a lab.

use std::process::Output;

use fleetbench_tests::lab::{Lab, text};
use fleetbench_tests::{Scratch, fleetbench, fleetbench_ok};

/// Asserts that a lab.sh command failed and that its output says `says`.
fn expect_refused(out: &Output, says: &str) {
    let all = text(out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains(says), "{all}");
}

/// Runs `fleetbench oltp_read_write OPTIONS CMD` and asserts it exited 0; its stdout.
fn oltp_read_write(options: &[String], cmd: &[&str]) -> String {
    let options = options.iter().map(String::as_str);
    let all: Vec<&str> = ["oltp_read_write"]
        .into_iter()
        .chain(options)
        .chain(cmd.iter().copied())
        .collect();
    fleetbench_ok(&all)
}

#[test]
fn the_lab_runs_sharded_and_proxy_topologies_and_cleans_up() {
    let scratch = Scratch::new("lab");
    let lab = Lab::new(scratch.path("lab"), 's');
    // The default hosts: master, slave and mycat, the proxy host.
    lab.up(&[]);
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
    ];
    // The lab's agents, and the token they want.
    let fleet = [
        format!("--agents={agents}"),
        format!("--token-file={token}"),
    ];
    // The slave replicates the master.
    assert_eq!(lab.var("LAB_REPLICA_slave"), "master");
    let run = |cmd: &[&str]| oltp_read_write(&[&targets[..], &fleet].concat(), cmd);
    run(&["--threads=2", "prepare"]);
    // The master's tables reach the slave by replication, beside the slave's own.
    lab.eventually(
        "slave",
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'",
        "4",
    );
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
    lab.eventually("slave", "SHOW TABLES FROM sbtest LIKE 'sbtest%'", "");
    scenario_with_replica_and_observers(&lab, &master, &slave, &agents, &token);

    // The proxy case of deploy/topology-master-slave-mycat.md: --mysql-host=<proxy>
    // --mysql-port=8066 --db-ps-mode=disable, prepare, run and cleanup through HAProxy.
    let mycat = lab.var("LAB_IP_mycat");
    let proxy = lab.var("LAB_PROXY");
    assert_eq!(proxy, format!("{mycat}:8066"));
    assert_eq!(lab.var("LAB_PROXY_mycat"), proxy);
    // A user the master lets in from the proxy host's address only (the slave does not
    // know it): every agent, on whichever host, gets in only by way of the proxy.
    lab.sql(
        "master",
        &format!(
            "CREATE USER 'viaproxy'@'{mycat}' IDENTIFIED BY 'viaproxy-pw';
             GRANT ALL ON sbtest.* TO 'viaproxy'@'{mycat}'"
        ),
    );
    let through_proxy = [
        format!("--mysql-host={mycat}"),
        "--mysql-port=8066".into(),
        "--mysql-user=viaproxy".into(),
        "--mysql-password=viaproxy-pw".into(),
        "--db-ps-mode=disable".into(),
        "--tables=2".into(),
        "--table-size=300".into(),
    ];
    let run = |cmd: &[&str]| oltp_read_write(&[&through_proxy[..], &fleet].concat(), cmd);
    run(&["--threads=2", "prepare"]);
    assert_eq!(
        lab.sql("master", "SELECT COUNT(*) FROM sbtest.sbtest2")
            .trim(),
        "300"
    );
    // Prepared on the master only: the slave has them by replication.
    lab.eventually("slave", "SELECT COUNT(*) FROM sbtest.sbtest2", "300");
    let selects = |host| lab.status(host, "Com_select");
    let (master_before, slave_before) = (selects("master"), selects("slave"));
    let text = run(&["--threads=3", "--events=150", "--time=0", "run"]);
    assert!(text.contains(&format!("({mycat}:8066)")), "{text}");
    // oltp_read_write's 14 SELECTs a transaction went to the master as text queries.
    let master_grew = selects("master") - master_before;
    assert!(
        master_grew >= 150 * 14,
        "master Com_select grew by {master_grew}"
    );
    assert_eq!(selects("slave"), slave_before, "the backup served queries");
    run(&["cleanup"]);
    assert_eq!(
        lab.sql("master", "SHOW TABLES FROM sbtest LIKE 'sbtest%'")
            .trim(),
        ""
    );
    lab.eventually("slave", "SHOW TABLES FROM sbtest LIKE 'sbtest%'", "");
    // HAProxy's own account: its MySQL checks pass on both, every session went to master.
    // A check can time out on a loaded machine (then a server reads "UP 1/3"); the next
    // one, 2 s later, passes again, so the test waits for a round where both pass.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let (m, s) = loop {
        let stats = lab.proxy_stats("mycat");
        let server = |name: &str| {
            stats
                .iter()
                .find(|r| r["pxname"] == "mysql" && r["svname"] == name)
                .cloned()
                .unwrap_or_else(|| panic!("no server {name} in {stats:?}"))
        };
        let (m, s) = (server("master"), server("slave"));
        let passing = |r: &std::collections::HashMap<String, String>| {
            (r["status"].as_str(), r["check_status"].as_str()) == ("UP", "L7OK")
        };
        if (passing(&m) && passing(&s)) || std::time::Instant::now() > deadline {
            break (m, s);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(
        (m["status"].as_str(), m["check_status"].as_str()),
        ("UP", "L7OK")
    );
    assert_eq!(
        (s["status"].as_str(), s["check_status"].as_str()),
        ("UP", "L7OK")
    );
    let sessions: u64 = m["stot"].parse().unwrap();
    assert!(sessions >= 3, "sessions to master: {m:?}");
    assert_eq!(s["stot"], "0", "sessions to the backup: {s:?}");

    let haproxy = lab.haproxy_pid();
    assert!(
        std::fs::read(format!("/proc/{haproxy}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("haproxy"))
    );
    assert_eq!(lab.namespaces().len(), 3);
    let down = lab.sh(&["down"]);
    assert!(down.status.success(), "{}", self::text(&down));
    assert!(
        !std::fs::read(format!("/proc/{haproxy}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("haproxy")),
        "HAProxy left running"
    );
    assert!(lab.namespaces().is_empty(), "namespaces left behind");
    assert!(!lab.bridge_exists(), "bridge left behind");
    assert!(!lab.dir.exists(), "state left behind");
}

/// A scenario that writes to the master with the slave declared its replica and every
/// host observed: each step says what a transaction cost both hosts and the slave's lag,
/// and the JSON has the replica's lag series and both hosts' figures.
fn scenario_with_replica_and_observers(
    lab: &Lab,
    master: &str,
    slave: &str,
    agents: &str,
    token: &str,
) {
    let agents: Vec<String> = agents.split(',').map(|a| format!("\"{a}\"")).collect();
    let toml = format!(
        r#"test = "oltp_write_only"
threads = [3]
time = 4
agents = [{}]
[options]
tables = 2
table-size = 500
report-interval = 1
[targets]
master = {{ url = "mysql://sbtest:sbtest-pw@{master}:3306/sbtest", observers = ["{master}:7600"] }}
slave = {{ url = "mysql://sbtest:sbtest-pw@{slave}:3306/sbtest", replica_of = "master", observers = ["{slave}:7600"] }}
[[scenario]]
name = "direct"
targets = ["master"]
"#,
        agents.join(", ")
    );
    let scratch = Scratch::new("lab-scenario");
    let token_opt = format!("--token-file={token}");
    let (text, v) = scratch.run_scenarios("replica", &toml, &[&token_opt]);
    let step = "[direct] step 1/1: 3 threads: ";
    assert!(
        text.contains(&format!("{step}server master: CPU ")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{step}server slave: CPU ")),
        "{text}"
    );
    assert!(text.contains("replica lag "), "{text}");
    let result = &v["scenarios"][0]["steps"][0]["result"];
    let targets = result["totals"]["targets"].as_array().unwrap();
    let slave_t = targets.iter().find(|t| t["name"] == "slave").unwrap();
    assert_eq!(slave_t["replica_of"], "master", "{slave_t}");
    let server = &slave_t["server"];
    assert!(
        server["replica_lag_s"]["intervals"].as_u64().unwrap() >= 2,
        "{server}"
    );
    // Applying the master's writes: rows written on the slave, per master transaction.
    assert!(
        server["per_tx"]["rows_written"].as_f64().unwrap() > 1.0,
        "{server}"
    );
    assert_eq!(
        server["hosts"][0]["addr"],
        format!("{slave}:7600"),
        "{server}"
    );
    let master_t = &targets[0];
    assert!(
        master_t["server"]["per_tx"]["cpu_us"].as_f64().unwrap() > 0.0,
        "{master_t}"
    );
    // The scenario cleaned up: the drop reached the slave too.
    lab.eventually("slave", "SHOW TABLES FROM sbtest LIKE 'sbtest%'", "");
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
fn a_proxy_host_alone_is_refused_before_anything_is_made() {
    let scratch = Scratch::new("lonelyproxy");
    let lab = Lab::new(scratch.path("lab"), 'p');
    expect_refused(
        &lab.sh(&["up", "proxy"]),
        "give at least one host not named mycat or proxy",
    );
    assert!(!lab.dir.exists() && lab.namespaces().is_empty() && !lab.bridge_exists());
}

#[test]
fn down_refuses_a_directory_that_is_not_a_lab() {
    let scratch = Scratch::new("notalab");
    let dir = scratch.path("precious");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("hosts"), "db 10.231.9.11\n").unwrap();
    std::fs::write(dir.join("sub/data"), "keep me").unwrap();
    let lab = Lab::new(dir.clone(), 'n');
    expect_refused(&lab.sh(&["down"]), "not a lab directory");
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/data")).unwrap(),
        "keep me"
    );
    assert!(dir.join("hosts").exists());
    // Nor does `up` take over a directory that holds something else.
    expect_refused(&lab.sh(&["up", "db"]), "not an empty directory");
    assert!(!dir.join(".fleetbench-lab").exists());
    assert!(lab.namespaces().is_empty());
}
