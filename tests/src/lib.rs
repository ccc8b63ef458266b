//! Helpers for the end-to-end tests: start real `fleetbench-agent` processes on port 0, run
//! the real `fleetbench` binary against them (and check its exit code, its one-line usage
//! errors and the JSON result it writes, alone or over a scenario file), run the other
//! programs the tests use, inspect processes through /proc.
//!
//! The binaries must be built first (`cargo build --workspace --bins`, which the test
//! script does); a missing binary fails the test with that instruction.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use fleetbench_proto::PROTOCOL_VERSION;
use fleetbench_proto::v1::HelloRequest;
use fleetbench_proto::v1::agent_client::AgentClient;

pub mod browser;
pub mod lab;
pub mod mariadb;
pub mod postgres;
mod servers;
pub mod shape;
pub mod shell;
pub mod tour;
pub mod tpcc;

pub use postgres::{PgOpts, Postgres};

/// Path of a workspace binary next to the test executable's profile directory.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target profile dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build the binaries first with `cargo build --workspace --bins`",
        path.display()
    );
    path
}

/// A scratch directory unique to this test process and label, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(label: &str) -> Self {
        let p =
            std::env::temp_dir().join(format!("fleetbench-test-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch dir");
        Scratch(p)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `contents` to the file `name` in this directory; its path.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).expect("write scratch file");
        path
    }

    /// Writes the scenario file `toml` here as `NAME.toml` and runs it like
    /// [`scenario_json`] with `args`, the JSON result going to `NAME.json` here; its stdout
    /// and that result.
    pub fn run_scenarios(
        &self,
        name: &str,
        toml: &str,
        args: &[&str],
    ) -> (String, serde_json::Value) {
        let file = self.write(&format!("{name}.toml"), toml);
        scenario_json(&file, args, &self.path(&format!("{name}.json")))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running agent process, killed when dropped.
pub struct AgentProc {
    pub child: Child,
    pub addr: String,
}

impl AgentProc {
    /// Starts `fleetbench-agent --listen 127.0.0.1:0` and waits for its address line.
    pub fn start() -> Self {
        Self::start_with(&[], &[])
    }

    /// Like [`AgentProc::start`], with extra arguments and environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(Command::new(bin("fleetbench-agent")), args, env)
    }

    /// Like [`AgentProc::start`], with the open-files limit (soft and hard) set to `nofile`.
    pub fn start_with_nofile(nofile: u64) -> Self {
        let mut cmd = Command::new(bin("fleetbench-agent"));
        set_limit(&mut cmd, libc::RLIMIT_NOFILE, nofile);
        Self::spawn(cmd, &[], &[])
    }

    /// Like [`AgentProc::start_with`], with the address space capped at `bytes`
    /// (RLIMIT_AS), so that a runaway allocation fails in the agent instead of taking the
    /// machine down.
    pub fn start_capped(bytes: u64, args: &[&str]) -> Self {
        let mut cmd = Command::new(bin("fleetbench-agent"));
        cap_memory(&mut cmd, bytes);
        Self::spawn(cmd, args, &[])
    }

    fn spawn(mut cmd: Command, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = cmd
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .env("FLEETBENCH_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn fleetbench-agent");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read agent address");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from agent: {line:?}"))
            .to_string();
        AgentProc { child, addr }
    }

    /// Starts two agents; both, and their addresses as an `--agents` list (`a,b`).
    pub fn pair() -> (Self, Self, String) {
        let (a, b) = (Self::start(), Self::start());
        let agents = format!("{},{}", a.addr, b.addr);
        (a, b, agents)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON result file the coordinator wrote.
pub fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("json file written")).expect("valid JSON")
}

/// Asserts that a coordinator run exited 0 (showing its output if not); its stdout.
pub fn expect_ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{text}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Runs the coordinator and asserts it exited 0 (showing the command and its output if
/// not); its stdout.
pub fn fleetbench_ok<S: AsRef<str>>(args: &[S]) -> String {
    let refs: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let out = fleetbench(&refs);
    assert_eq!(
        out.status.code(),
        Some(0),
        "fleetbench {refs:?}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The words of a command line written as one string (split at blanks, no quoting).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// A command line made of `parts`, one after the other.
pub fn command_line(parts: &[&[&str]]) -> Vec<String> {
    parts.concat().into_iter().map(String::from).collect()
}

/// The sum of `f` over the elements of the JSON array (or the values of the JSON object) `v`.
pub fn sum_over(v: &serde_json::Value, f: impl Fn(&serde_json::Value) -> u64) -> u64 {
    match v {
        serde_json::Value::Array(items) => items.iter().map(f).sum(),
        serde_json::Value::Object(map) => map.values().map(f).sum(),
        _ => panic!("not an array or an object: {v}"),
    }
}

/// Runs the coordinator with `args`, then `--json=<path>` and `run`, and asserts it exited
/// 0; its stdout and the JSON result it wrote to `path`.
pub fn run_json<S: AsRef<str>>(args: &[S], path: &std::path::Path) -> (String, serde_json::Value) {
    let mut all: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let json_opt = format!("--json={}", path.display());
    all.extend([json_opt.as_str(), "run"]);
    let text = fleetbench_ok(&all);
    (text, json(path))
}

/// Runs `fleetbench scenario run FILE ARGS --json=<path>` and asserts it exited 0; its
/// stdout and the JSON result it wrote to `path`.
pub fn scenario_json(
    file: &std::path::Path,
    args: &[&str],
    path: &std::path::Path,
) -> (String, serde_json::Value) {
    let file = file.to_str().expect("UTF-8 path");
    let json_opt = format!("--json={}", path.display());
    let all = [&["scenario", "run", file][..], args, &[json_opt.as_str()]].concat();
    let text = fleetbench_ok(&all);
    (text, json(path))
}

/// Asserts that a coordinator run (`what`, for the messages) was refused as a usage error:
/// exit code 2 and one line on stderr containing each of `needles`; that line.
pub fn expect_usage_error(out: &Output, what: &str, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: stderr {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: one line expected, got:\n{err}"
    );
    for needle in needles {
        assert!(err.contains(needle), "{what}: {err:?} lacks {needle:?}");
    }
    err
}

/// Caps the address space (RLIMIT_AS) of the process `cmd` starts at `bytes`.
pub fn cap_memory(cmd: &mut Command, bytes: u64) {
    set_limit(cmd, libc::RLIMIT_AS, bytes);
}

/// Sets the limit `resource` (soft and hard) of the process `cmd` starts to `value`.
fn set_limit(cmd: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Runs the coordinator with its address space capped at `bytes`; waits at most 120 s.
pub fn fleetbench_capped(args: &[&str], bytes: u64) -> Output {
    fleetbench_capped_env(args, bytes, &[])
}

/// [`fleetbench_capped`] with extra environment variables.
pub fn fleetbench_capped_env(args: &[&str], bytes: u64, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin("fleetbench"));
    cap_memory(&mut cmd, bytes);
    run_to_end(cmd, args, env)
}

/// Runs the coordinator to completion with a time limit.
pub fn fleetbench(args: &[&str]) -> Output {
    fleetbench_env(args, &[])
}

/// Runs the coordinator with extra environment variables.
pub fn fleetbench_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    run_to_end(Command::new(bin("fleetbench")), args, env)
}

/// Runs `cmd` (the coordinator) with `args` to its end, its output captured; at most 120 s.
fn run_to_end(mut cmd: Command, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut child = cmd
        .args(args)
        .env_remove("FLEETBENCH_TOKEN")
        // The tests' runs go to the catalog under XDG_DATA_HOME (scripts/test.sh sets a
        // throwaway one), or where a test says.
        .env_remove("FLEETBENCH_CATALOG")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fleetbench");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("fleetbench {args:?} did not finish within 120s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A coordinator started in the background, its stdout read line by line.
pub struct Running {
    pub child: Child,
    pub lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Running {
    /// Starts `fleetbench ARGS` and returns once its first interval line (`[ 1s ]`) is out,
    /// i.e. once the load runs. The args should include `--report-interval=1`.
    pub fn until_first_interval<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Self {
        let mut child = Command::new(bin("fleetbench"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fleetbench");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let t0 = Instant::now();
        loop {
            let line = lines.next().expect("coordinator output").expect("line");
            if line.starts_with("[ 1s ]") {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "no interval line");
        }
        Running { child, lines }
    }

    /// Waits for the end: the exit code and the rest of stdout.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let rest: Vec<String> = self.lines.by_ref().map(|l| l.expect("line")).collect();
        let status = self.child.wait().expect("wait");
        (status.code(), rest.join("\n"))
    }
}

/// Number of threads of process `pid`.
pub fn thread_count(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("Threads: line")
}

/// Load threads of process `pid`: the agent's workers, their cooperative loops and I/O
/// threads, by the names the agent gives them. Unlike [`thread_count`], not moved by the
/// short-lived helper threads an agent starts between jobs (handing memory back).
pub fn worker_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| {
            ["fb-worker-", "fb-oltp-", "fb-loop-", "fb-aio-", "fb-script"]
                .iter()
                .any(|p| name.starts_with(p))
        })
        .count()
}

/// CPU time (user + system) of process `pid` in clock ticks.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Asks an agent who it is and whether it is busy: (busy run id, cores).
pub async fn hello(addr: &str) -> (String, u32) {
    let mut c = AgentClient::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    let r = c
        .hello(HelloRequest {
            protocol_version: PROTOCOL_VERSION,
            coordinator_version: "test".into(),
        })
        .await
        .expect("hello")
        .into_inner();
    (r.busy_run_id, r.cores)
}

/// A port on 127.0.0.1 that was free a moment ago, for a server that cannot bind port 0
/// and say which port it got (mariadbd, Prometheus).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("probe a free port")
        .port()
}

/// Polls `cond` every 20 ms until it holds or `within` passes; returns whether it held.
pub fn wait_until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` (another program the tests use: `install` says how to get it) to its end and
/// asserts it succeeded, showing its output if not; its stdout.
pub fn run_tool(cmd: &mut Command, install: &str) -> String {
    let out = cmd.output().expect(install);
    assert!(
        out.status.success(),
        "{cmd:?}:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn openssl(dir: &std::path::Path, args: &[&str]) {
    run_tool(
        Command::new("openssl").args(args).current_dir(dir),
        "openssl is installed (apt-get install openssl)",
    );
}

/// P-256 keys: generated in milliseconds, and every client the tests use speaks ECDSA.
const EC_KEY: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
];

/// A CA (`ca.pem`, `ca.key`) named `subject` in `dir`, made with the openssl command
/// (Debian's ca-certificates brings it), valid for two days.
pub fn make_ca(dir: &std::path::Path, subject: &str) {
    let mut ca = vec!["req", "-x509", "-keyout", "ca.key", "-out", "ca.pem"];
    ca.extend(EC_KEY);
    ca.extend(["-days", "2", "-subj", subject]);
    ca.extend(["-addext", "basicConstraints=critical,CA:TRUE"]);
    ca.extend(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    openssl(dir, &ca);
}

/// A key `NAME.key` and a certificate `cert` for the subject `/CN=cn` with these X.509 v3
/// extensions (`NAME.ext`'s text), signed by the CA that [`make_ca`] made in `dir`.
pub fn issue_cert(dir: &std::path::Path, name: &str, cn: &str, ext: &str, cert: &str) {
    let (key, csr, extfile) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.ext"),
    );
    std::fs::write(dir.join(&extfile), ext).unwrap();
    let subj = format!("/CN={cn}");
    let mut req = vec!["req", "-keyout", &key, "-out", &csr, "-subj", &subj];
    req.extend(EC_KEY);
    openssl(dir, &req);
    let mut sign = vec!["x509", "-req", "-in", &csr, "-out", cert, "-days", "2"];
    sign.extend(["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"]);
    sign.extend(["-extfile", &extfile]);
    openssl(dir, &sign);
}

/// A CA (ca.pem, ca.key), a server certificate for 127.0.0.1 (agent.pem, agent.key) and
/// a client certificate (client.pem, client.key), in `dir`.
pub fn make_certs(dir: &std::path::Path) {
    make_ca(dir, "/CN=fleetbench test CA");
    issue_cert(
        dir,
        "agent",
        "agent",
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
        "agent.pem",
    );
    issue_cert(
        dir,
        "client",
        "client",
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        "client.pem",
    );
}
