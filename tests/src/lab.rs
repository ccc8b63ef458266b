//! deploy/lab.sh driven from tests: hosts in network namespaces, each with its own MariaDB
//! and agent, made and removed by the test that uses them (tests/tests/lab.rs, faults.rs).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::bin;

/// A lab of deploy/lab.sh made by a test: its directory, its name, the script.
pub struct Lab {
    pub dir: PathBuf,
    pub name: String,
    pub script: PathBuf,
}

impl Lab {
    /// A lab in `dir` named `tag` plus this process's id, so concurrent test runs differ.
    pub fn new(dir: PathBuf, tag: char) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        Lab {
            dir,
            name: format!("{tag}{}", std::process::id() % 10_000_000),
            script: root.join("deploy/lab.sh"),
        }
    }

    pub fn sh(&self, args: &[&str]) -> Output {
        let bin_dir = bin("fleetbench-agent").parent().unwrap().to_path_buf();
        Command::new(&self.script)
            .args(args)
            .env("FLEETBENCH_LAB_DIR", &self.dir)
            .env("FLEETBENCH_LAB_NAME", &self.name)
            .env("FLEETBENCH_BIN", bin_dir)
            .output()
            .expect("run deploy/lab.sh")
    }

    pub fn up(&self, hosts: &[&str]) {
        let mut args = vec!["up"];
        args.extend_from_slice(hosts);
        let up = self.sh(&args);
        assert!(up.status.success(), "lab up: {}", text(&up));
    }

    pub fn env(&self) -> String {
        String::from_utf8_lossy(&self.sh(&["env"]).stdout).to_string()
    }

    pub fn var(&self, k: &str) -> String {
        let env = self.env();
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing in {env}"))
            .to_string()
    }

    /// This lab's namespaces that exist now.
    pub fn namespaces(&self) -> Vec<String> {
        let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
        let prefix = format!("fblab-{}-", self.name);
        String::from_utf8_lossy(&ns.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&prefix))
            .map(str::to_string)
            .collect()
    }

    /// Runs `sql` as root over the socket of `host`'s MariaDB; stdout, tab-separated.
    pub fn sql(&self, host: &str, sql: &str) -> String {
        let client = if Path::new("/usr/bin/mariadb").exists() {
            "/usr/bin/mariadb"
        } else {
            "mariadb"
        };
        let socket = self.dir.join(host).join("db/mysqld.sock");
        let out = Command::new(client)
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-uroot", "-N", "-B", "-e", sql])
            .output()
            .expect("run the mariadb client");
        assert!(out.status.success(), "{sql} on {host}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// `host`'s MariaDB global status counter `name`.
    pub fn status(&self, host: &str, name: &str) -> u64 {
        let out = self.sql(host, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        out.split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} on {host}: {out:?}"))
    }

    /// HAProxy's `show stat` on proxy host `host`, from its stats socket: one map of
    /// column name (pxname, svname, status, stot, ...) to value per row.
    /// Waits up to 20 s for `sql` on `host` to print `want` (replication catching up).
    pub fn eventually(&self, host: &str, sql: &str, want: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let got = self.sql(host, sql);
            if got.trim() == want {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{host}: {sql} printed {got:?}, not {want:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    pub fn proxy_stats(&self, host: &str) -> Vec<std::collections::HashMap<String, String>> {
        let mut sock = UnixStream::connect(self.dir.join(host).join("haproxy.sock"))
            .expect("HAProxy's stats socket");
        sock.write_all(b"show stat\n").unwrap();
        let mut csv = String::new();
        sock.read_to_string(&mut csv).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .and_then(|h| h.strip_prefix("# "))
            .unwrap_or_else(|| panic!("no header in {csv:?}"))
            .split(',')
            .collect();
        lines
            .filter(|l| !l.is_empty())
            .map(|l| {
                header
                    .iter()
                    .zip(l.split(','))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .collect()
    }

    /// The pid of the HAProxy `up` started, from the lab's record.
    pub fn haproxy_pid(&self) -> u32 {
        let made = std::fs::read_to_string(self.dir.join("made")).unwrap();
        made.lines()
            .find_map(|l| l.strip_prefix("haproxy "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no haproxy in the record: {made}"))
    }

    pub fn bridge_exists(&self) -> bool {
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

/// An output's stdout and stderr, for messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
