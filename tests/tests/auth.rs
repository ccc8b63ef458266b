//! Every call to an agent with a token must carry it: without it or with a wrong one the
//! coordinator gets one clear error, exit 2, and the agent does no work.

use std::process::Command;

use fleetbench_tests::{AgentProc, Scratch, bin, expect_ok, fleetbench_env, worker_threads};

const TOKEN: &str = "correct-horse-battery-staple";

fn run(agent: &AgentProc, env: &[(&str, &str)], extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "cpu",
        "--agents",
        &agent.addr,
        "--threads=2",
        "--events=20",
        "--time=0",
    ];
    args.extend_from_slice(extra);
    args.push("run");
    fleetbench_env(&args, env)
}

#[test]
fn missing_or_wrong_token_is_rejected_and_nothing_runs() {
    let agent = AgentProc::start_with(&[], &[("FLEETBENCH_TOKEN", TOKEN)]);
    let idle = worker_threads(agent.pid());
    for (env, what) in [
        (vec![], "requires a token"),
        (vec![("FLEETBENCH_TOKEN", "guess")], "wrong token"),
    ] {
        let out = run(&agent, &env, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("agent {} refused the token", agent.addr)) && err.contains(what),
            "{err}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("Threads started"));
        assert_eq!(
            worker_threads(agent.pid()),
            idle,
            "no worker thread was started"
        );
    }
    // The right token, from the environment or a file, works.
    let out = run(&agent, &[("FLEETBENCH_TOKEN", TOKEN)], &[]);
    expect_ok(&out);
    let scratch = Scratch::new("token");
    let file = scratch.path("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let out = run(&agent, &[], &["--token-file", file.to_str().unwrap()]);
    expect_ok(&out);
}

#[test]
fn an_agent_without_token_refuses_a_public_address() {
    let out = Command::new(bin("fleetbench-agent"))
        .args(["--listen", "0.0.0.0:0"])
        .env_remove("FLEETBENCH_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{err}"
    );
}
