//! fileio end to end: two real agent processes, each with its own work directory, prepare,
//! run and cleanup through the coordinator; the safety rules about the work directory; and
//! the errors a user meets first.

use std::path::Path;

use fleetbench_tests::{
    AgentProc, Scratch, command_line, fleetbench, fleetbench_env, fleetbench_ok, run_json,
};
use serde_json::Value;

fn agent_in(dir: &Path, env: &[(&str, &str)]) -> AgentProc {
    std::fs::create_dir_all(dir).unwrap();
    AgentProc::start_with(&["--work-dir", dir.to_str().unwrap()], env)
}

/// The command line of each step of a test on agents `a` and `b` with `files` files, 4 MiB
/// in all, in `data` under each one's work directory: `fileio`, those options, 4 KiB
/// blocks, then the step's own `extra`.
fn two_agent_steps(a: &AgentProc, b: &AgentProc, files: u32) -> impl Fn(&[&str]) -> Vec<String> {
    let agents = format!("{},{}", a.addr, b.addr);
    let file_num = format!("--file-num={files}");
    let common = [
        "fileio",
        "--agents",
        &agents,
        &file_num,
        "--file-total-size=4M",
        "--file-block-size=4K",
        "--file-dir=data",
    ]
    .map(String::from);
    move |extra: &[&str]| {
        let common: Vec<&str> = common.iter().map(String::as_str).collect();
        command_line(&[&common, extra])
    }
}

/// One clear line on stderr, exit code 2.
fn refused(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    err
}

fn files_in(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether `dir`'s device has block statistics, worked out here from stat(2) (not with the
/// agent's own code): a major number other than 0 and a /sys/dev/block entry.
fn has_block_stat(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    major != 0 && Path::new(&format!("/sys/dev/block/{major}:{minor}/stat")).exists()
}

const NO_DISK: &str = "disk figures: none (work dir on a device without block statistics)";

/// The disk figures of a fileio run: present and in range per agent and per interval when
/// the work directories' device has block statistics, else absent and said once.
fn check_disk_figures(j: &Value, text: &str, resolves: bool) {
    for a in j["agents"].as_array().unwrap() {
        let disk = &a["host_load"]["disk"];
        if !resolves {
            assert!(disk.is_null(), "{a}");
            continue;
        }
        for k in ["util_pct_avg", "util_pct_peak"] {
            let u = disk[k].as_f64().unwrap_or_else(|| panic!("no {k}: {a}"));
            assert!((0.0..=100.0).contains(&u), "{k} {u}: {a}");
        }
        assert!(disk["queue_depth_peak"].as_f64().unwrap() >= 0.0, "{a}");
    }
    for iv in j["intervals"].as_array().unwrap() {
        for h in iv["agent_hosts"].as_array().unwrap() {
            let disk = &h["disk"];
            if resolves {
                let u = disk["util_pct"].as_f64().unwrap_or_else(|| panic!("{iv}"));
                assert!((0.0..=100.0).contains(&u), "{iv}");
                assert!(disk["queue_depth"].as_f64().unwrap() >= 0.0, "{iv}");
            } else {
                assert!(disk.is_null(), "{iv}");
            }
        }
    }
    if resolves {
        assert!(
            text.contains("disk util %") && !text.contains("disk figures: none"),
            "{text}"
        );
    } else {
        assert_eq!(text.matches(NO_DISK).count(), 1, "{text}");
    }
}

fn sum(agents: &[Value], section: &str, field: &str) -> u64 {
    agents
        .iter()
        .map(|a| a[section][field].as_u64().unwrap())
        .sum()
}

#[test]
fn two_agents_prepare_run_every_mode_and_clean_up_only_their_files() {
    let scratch = Scratch::new("fileio-two");
    let (wa, wb) = (scratch.path("a"), scratch.path("b"));
    let (a, b) = (
        agent_in(&wa, &[]),
        agent_in(&wb, &[("FLEETBENCH_AIO", "pool")]),
    );
    // Files that are not this test's: cleanup must leave them alone.
    std::fs::create_dir_all(wa.join("data")).unwrap();
    std::fs::write(wa.join("data/keep.txt"), b"mine").unwrap();
    std::fs::write(wa.join("data/test_file.7"), b"also mine").unwrap();
    let with = two_agent_steps(&a, &b, 4);

    // Prepare: each agent writes the full set, exactly 4 x 1 MiB.
    let text = fleetbench_ok(&with(&["--threads=2", "prepare"]));
    assert!(text.contains("4 files, 1MiB each"), "{text}");
    assert!(text.contains("4194304 bytes written"), "{text}");
    for dir in [&wa, &wb] {
        let files: Vec<(String, u64)> = files_in(&dir.join("data"))
            .into_iter()
            .filter(|(n, _)| n.starts_with("test_file.") && n != "test_file.7")
            .collect();
        assert_eq!(
            files,
            (0..4)
                .map(|i| (format!("test_file.{i}"), 1 << 20))
                .collect::<Vec<_>>(),
            "{}",
            dir.display()
        );
    }

    // A timed random r/w run: merged figures are the sums of the per-agent ones.
    let (text, j) = run_json(
        &with(&[
            "--file-test-mode=rndrw",
            "--threads=3",
            "--time=2",
            "--report-interval=1",
        ]),
        &scratch.path("rndrw.json"),
    );
    for part in [
        "File operations:",
        "    reads/s:",
        "Throughput:",
        "    written, MiB/s:",
        "Doing random r/w test",
        "[ 1s ] reads: ",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    let agents = j["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    let t = &j["totals"]["file"];
    for field in ["reads", "writes", "fsyncs", "bytes_read", "bytes_written"] {
        assert_eq!(
            t[field].as_u64().unwrap(),
            sum(agents, "file", field),
            "{field}"
        );
    }
    assert!(t["reads"].as_u64().unwrap() > 0 && t["writes"].as_u64().unwrap() > 0);
    assert_eq!(
        t["bytes_read"].as_u64(),
        Some(t["reads"].as_u64().unwrap() * 4096)
    );
    // Every event is one read, write or periodic fsync (the fsyncs at the end are extra).
    let events = j["totals"]["events"].as_u64().unwrap();
    let ops = t["reads"].as_u64().unwrap() + t["writes"].as_u64().unwrap();
    assert!(events >= ops && events <= ops + t["fsyncs"].as_u64().unwrap());
    let ratio = t["reads"].as_f64().unwrap() / t["writes"].as_f64().unwrap();
    assert!((ratio - 1.5).abs() < 0.05, "read/write ratio {ratio}");
    // The disk under both work directories (the same scratch device).
    let resolves = has_block_stat(&wa.join("data"));
    assert_eq!(resolves, has_block_stat(&wb.join("data")));
    check_disk_figures(&j, &text, resolves);

    // Every test mode in every I/O mode, with an exact event limit over both agents.
    for (mode, reads, writes) in [
        ("seqwr", false, true),
        ("seqrewr", false, true),
        ("seqrd", true, false),
        ("rndrd", true, false),
        ("rndwr", false, true),
    ] {
        for io in ["sync", "async", "mmap"] {
            let (test_mode, io_mode) = (
                format!("--file-test-mode={mode}"),
                format!("--file-io-mode={io}"),
            );
            let (_, j) = run_json(
                &with(&[
                    &test_mode,
                    &io_mode,
                    "--file-async-backlog=8",
                    "--threads=2",
                    "--events=400",
                    "--time=0",
                ]),
                &scratch.path(&format!("{mode}-{io}.json")),
            );
            let t = &j["totals"]["file"];
            assert_eq!(j["totals"]["events"].as_u64(), Some(400), "{mode} {io}");
            let (r, w) = (t["reads"].as_u64().unwrap(), t["writes"].as_u64().unwrap());
            assert_eq!((r > 0, w > 0), (reads, writes), "{mode} {io}: {t}");
            let agents = j["agents"].as_array().unwrap();
            assert_eq!(r, sum(agents, "file", "reads"), "{mode} {io}");
            assert_eq!(w, sum(agents, "file", "writes"), "{mode} {io}");
        }
    }

    // Cleanup removes test_file.0..3 and nothing else.
    let text = fleetbench_ok(&with(&["cleanup"]));
    assert!(text.contains("Removed 4 test files"), "{text}");
    assert_eq!(
        files_in(&wa.join("data")),
        vec![("keep.txt".into(), 4), ("test_file.7".into(), 9)]
    );
    assert!(files_in(&wb.join("data")).is_empty());
}

#[test]
fn file_dir_outside_the_work_directory_is_refused() {
    let scratch = Scratch::new("fileio-escape");
    let work = scratch.path("work");
    let outside = scratch.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let agent = agent_in(&work, &[]);
    std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
    let abs = format!("--file-dir={}", outside.display());
    for dir in [
        "--file-dir=../outside",
        abs.as_str(),
        "--file-dir=link",
        "--file-dir=link/sub",
    ] {
        let out = fleetbench(&[
            "fileio",
            "--agents",
            &agent.addr,
            "--file-num=2",
            "--file-total-size=64K",
            dir,
            "prepare",
        ]);
        let err = refused(&out);
        assert!(err.contains("refused"), "{dir}: {err}");
    }
    assert!(
        files_in(&outside).is_empty(),
        "something was written outside"
    );
    assert_eq!(files_in(&work), vec![("link".into(), files_in(&work)[0].1)]);
}

#[test]
fn direct_io_needs_512_byte_blocks() {
    let out = fleetbench(&[
        "fileio",
        "--file-extra-flags=direct",
        "--file-block-size=1000",
        "--file-test-mode=rndrd",
        "run",
    ]);
    let err = refused(&out);
    assert!(err.contains("multiple of 512"), "{err}");
}

#[test]
fn run_without_prepare_names_the_missing_file() {
    let scratch = Scratch::new("fileio-missing");
    let agent = agent_in(&scratch.path("w"), &[]);
    let out = fleetbench_env(
        &[
            "fileio",
            "--agents",
            &agent.addr,
            "--file-num=2",
            "--file-total-size=64K",
            "--file-test-mode=seqrd",
            "run",
        ],
        &[],
    );
    let err = refused(&out);
    assert!(
        err.contains("test_file.0") && err.contains("prepare"),
        "{err}"
    );
    assert!(files_in(&scratch.path("w")).is_empty());
}

/// A work directory on tmpfs (/dev/shm, major 0) has no block statistics: no disk figures,
/// and the report says so once. Skipped where /dev/shm is missing or on a real device.
#[test]
fn a_work_dir_without_block_statistics_gives_no_disk_figures() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || has_block_stat(shm) {
        eprintln!("skipped: no /dev/shm without block statistics");
        return;
    }
    let dir = shm.join(format!("fleetbench-test-{}-nodisk", std::process::id()));
    let agent = agent_in(&dir, &[]);
    let common = [
        "fileio",
        "--agents",
        &agent.addr,
        "--file-num=1",
        "--file-total-size=256K",
        "--file-block-size=4K",
    ];
    let with = |extra: &[&str]| command_line(&[&common, extra]);
    fleetbench_ok(&with(&["prepare"]));
    let (text, j) = run_json(
        &with(&[
            "--file-test-mode=rndrd",
            "--threads=1",
            "--time=2",
            "--report-interval=1",
        ]),
        &dir.join("run.json"),
    );
    fleetbench_ok(&with(&["cleanup"]));
    drop(agent);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(j["agents"][0]["host_load"].is_object(), "{j}");
    check_disk_figures(&j, &text, false);
}

/// Two agents on one host sharing one work directory (and --file-dir): each prepares,
/// runs on and removes the same files at the same time. No step may fail because the
/// other agent created or removed a file first; ten rounds in a row.
#[test]
fn two_agents_sharing_one_work_directory_prepare_run_and_clean_up_ten_times() {
    let scratch = Scratch::new("fileio-shared");
    let work = scratch.path("shared");
    let (a, b) = (agent_in(&work, &[]), agent_in(&work, &[]));
    let with = two_agent_steps(&a, &b, 16);
    let step = |round: usize, what: &str, args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fleetbench(&args);
        assert!(
            out.status.success(),
            "round {round}, {what}: exit {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for round in 1..=10 {
        step(round, "prepare", with(&["--threads=4", "prepare"]));
        let files = files_in(&work.join("data"));
        assert_eq!(
            files,
            {
                let mut v: Vec<(String, u64)> = (0..16)
                    .map(|i| (format!("test_file.{i}"), 256 * 1024))
                    .collect();
                v.sort();
                v
            },
            "round {round}: after prepare"
        );
        let text = step(
            round,
            "run",
            with(&["--file-test-mode=rndrw", "--threads=2", "--time=1", "run"]),
        );
        assert!(text.contains("File operations:"), "round {round}: {text}");
        step(round, "cleanup", with(&["cleanup"]));
        let left: Vec<_> = files_in(&work.join("data"))
            .into_iter()
            .filter(|(n, _)| n.starts_with("test_file."))
            .collect();
        assert!(
            left.is_empty(),
            "round {round}: left after cleanup: {left:?}"
        );
    }
}
