//! TLS to the database and the authentication plugins of the lean client, against a
//! private MariaDB with TLS on: accounts that require TLS or a client certificate, the
//! certificate checks of each --mysql-ssl-mode, a server without TLS, an ed25519 account,
//! and bad certificate files. The embedded agent's log says which client ran: every run
//! here must use the lean client, not the mysql_async fallback.

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, fleetbench_env, make_certs};

/// A MariaDB serving TLS only (require_secure_transport) with the test CA's certificate
/// for 127.0.0.1, and users `plainu`, `tlsu` (REQUIRE SSL) and `x509u` (REQUIRE X509).
fn tls_server(dir: &std::path::Path) -> MariaDb {
    make_certs(dir);
    let f = |n: &str| format!("{}", dir.join(n).display());
    let db = MariaDb::start_with(&[
        &format!("--ssl-ca={}", f("ca.pem")),
        &format!("--ssl-cert={}", f("agent.pem")),
        &format!("--ssl-key={}", f("agent.key")),
        "--require-secure-transport=ON",
    ]);
    db.sql(
        "CREATE USER 'tlsu'@'%' IDENTIFIED BY 'pw' REQUIRE SSL;
         GRANT ALL ON *.* TO 'tlsu'@'%';
         CREATE USER 'plainu'@'%' IDENTIFIED BY 'pw';
         GRANT ALL ON *.* TO 'plainu'@'%';
         CREATE USER 'x509u'@'%' IDENTIFIED BY 'pw' REQUIRE X509;
         GRANT ALL ON *.* TO 'x509u'@'%';",
    );
    db
}

/// Runs the coordinator with an embedded agent whose log is on stderr: (exit code,
/// stdout, stderr).
fn run(db: &MariaDb, user: &str, extra: &[&str], command: &str) -> (Option<i32>, String, String) {
    let port = format!("--mysql-port={}", db.port());
    let user = format!("--mysql-user={user}");
    let mut args = vec![
        "oltp_point_select",
        "--mysql-host=127.0.0.1",
        &port,
        &user,
        "--mysql-password=pw",
        "--tables=2",
        "--table-size=100",
        "--threads=2",
        "--time=1",
    ];
    args.extend_from_slice(extra);
    args.push(command);
    let out = fleetbench_env(&args, &[("FLEETBENCH_LOG", "fleetbench_agent=info")]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_lean_run(r: &(Option<i32>, String, String)) {
    let (code, stdout, stderr) = r;
    assert_eq!(*code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("lean protocol client"), "{stderr}");
    assert!(!stderr.contains("fall back"), "{stderr}");
    assert!(stdout.contains("queries:"), "{stdout}");
    // The per-target block says how the connections were made.
    assert!(stdout.contains("connections: lean client, "), "{stdout}");
}

/// The error line of a failed run (the embedded agent's log lines aside).
fn error_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("fleetbench: error:"))
        .unwrap_or_else(|| panic!("no error line in:\n{stderr}"))
}

#[test]
fn tls_accounts_run_on_the_lean_client_and_certificates_are_checked() {
    let scratch = Scratch::new("db-tls");
    let d = &scratch.0;
    let db = tls_server(d);
    let ca = format!("--mysql-ssl-ca={}", d.join("ca.pem").display());
    let cert = format!("--mysql-ssl-cert={}", d.join("client.pem").display());
    let key = format!("--mysql-ssl-key={}", d.join("client.key").display());
    let before = db.status("Ssl_accepts");

    // Prepare (mysql_async) and run (lean client) over TLS, the server's name checked.
    let verify = ["--mysql-ssl-mode=verify_identity", &ca];
    let (code, out, err) = run(&db, "tlsu", &verify, "prepare");
    assert_eq!(code, Some(0), "{out}\n{err}");
    let r = run(&db, "tlsu", &verify, "run");
    assert_lean_run(&r);
    // The header says how the connections were made before the run starts, and the
    // per-target block repeats it.
    let way = format!(
        "lean client, mysql_native_password, TLSv1_3, server {}",
        db.sql("SELECT VERSION()").trim()
    );
    let header = format!(
        "Connections to default (127.0.0.1:{}): {way}\n\nThreads started!",
        db.port()
    );
    assert!(r.1.contains(&header), "{}", r.1);
    assert!(r.1.contains(&format!("connections: {way}")), "{}", r.1);
    assert!(
        db.status("Ssl_accepts") >= before + 3,
        "TLS handshakes on the server"
    );

    // --mysql-ssl=on alone: encrypted, certificate not checked.
    assert_lean_run(&run(&db, "tlsu", &["--mysql-ssl=on"], "run"));

    // An open loop: its workers share a cooperative thread, whose non-blocking sockets
    // carry the TLS records too. 2 threads at 200/s for 1 s: about 200 events.
    let r = run(&db, "tlsu", &["--mysql-ssl=on", "--rate=200"], "run");
    assert_lean_run(&r);
    assert!(r.2.contains("run as cooperative workers on"), "{}", r.2);
    let events: u64 =
        r.1.lines()
            .find_map(|l| l.trim().strip_prefix("total number of events:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no event total in:\n{}", r.1));
    assert!((100..300).contains(&events), "{events} events:\n{}", r.1);

    // Without TLS the server refuses (require_secure_transport; MariaDB 10.11 says only
    // "Access denied"), and its error is shown with the target's name.
    let (code, _, err) = run(&db, "plainu", &["--mysql-ssl=off"], "run");
    assert_eq!(code, Some(2), "{err}");
    let line = error_line(&err);
    assert!(
        line.contains("Access denied") && line.contains("target default"),
        "{err}"
    );
    let (code, _, err) = run(&db, "tlsu", &[], "run");
    assert_eq!(code, Some(2), "{err}");
    assert!(error_line(&err).contains("Access denied"), "{err}");
    assert_lean_run(&run(&db, "plainu", &["--mysql-ssl=on"], "run"));

    // A client certificate for the X509 account; without it, refused.
    assert_lean_run(&run(&db, "x509u", &["--mysql-ssl=on", &cert, &key], "run"));
    let (code, _, err) = run(&db, "x509u", &["--mysql-ssl=on"], "run");
    assert_eq!(code, Some(2), "{err}");

    // The certificate is for 127.0.0.1, not "localhost": verify_identity refuses the
    // name, verify_ca accepts the chain.
    let port = format!("--mysql-port={}", db.port());
    let by_name = |mode: &str| {
        let mode = format!("--mysql-ssl-mode={mode}");
        let out = fleetbench_env(
            &[
                "oltp_point_select",
                "--mysql-host=localhost",
                &port,
                "--mysql-user=tlsu",
                "--mysql-password=pw",
                "--tables=2",
                "--table-size=100",
                "--threads=1",
                "--time=1",
                &mode,
                &ca,
                "run",
            ],
            &[],
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = by_name("verify_identity");
    assert_eq!(code, Some(2), "{err}");
    assert!(error_line(&err).contains("TLS"), "{err}");
    let (code, err) = by_name("verify_ca");
    assert_eq!(code, Some(0), "{err}");

    // A certificate from another CA: refused, saying why.
    let other = Scratch::new("db-tls-other-ca");
    make_certs(&other.0);
    let other_ca = format!("--mysql-ssl-ca={}", other.0.join("ca.pem").display());
    let (code, _, err) = run(
        &db,
        "tlsu",
        &["--mysql-ssl-mode=verify_ca", &other_ca],
        "run",
    );
    assert_eq!(code, Some(2), "{err}");
    let line = error_line(&err);
    assert!(
        line.contains("TLS") && line.contains("certificate"),
        "{err}"
    );

    // A CA file that is not there: one line naming the file.
    let (code, _, err) = run(
        &db,
        "tlsu",
        &[
            "--mysql-ssl-mode=verify_ca",
            "--mysql-ssl-ca=/nonexistent/ca.pem",
        ],
        "run",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(error_line(&err).contains("/nonexistent/ca.pem"), "{err}");

    // The same settings in a --target URL.
    let url = format!(
        "--target=t=mysql://tlsu:pw@127.0.0.1:{}/sbtest?ssl-mode=verify_identity&ssl-ca={}",
        db.port(),
        d.join("ca.pem").display()
    );
    let out = fleetbench_env(
        &[
            "oltp_point_select",
            &url,
            "--tables=2",
            "--table-size=100",
            "--threads=1",
            "--time=1",
            "run",
        ],
        &[("FLEETBENCH_LOG", "fleetbench_agent=info")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("lean protocol client"), "{err}");

    // Cleanup over TLS too, and only what was prepared: the tables are gone.
    let (code, out, err) = run(&db, "tlsu", &verify, "cleanup");
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(db.sql("SHOW TABLES FROM sbtest LIKE 'sbtest%'").trim(), "");
}

#[test]
fn a_server_without_tls_is_refused_when_tls_is_required() {
    let db = MariaDb::start();
    db.sql("CREATE USER 'u'@'%' IDENTIFIED BY 'pw'; GRANT ALL ON *.* TO 'u'@'%';");
    let (code, _, err) = run(&db, "u", &["--mysql-ssl-mode=preferred"], "prepare");
    assert_eq!(code, Some(0), "preferred goes without TLS: {err}");
    assert_lean_run(&run(&db, "u", &["--mysql-ssl-mode=preferred"], "run"));
    let (code, _, err) = run(&db, "u", &["--mysql-ssl=on"], "run");
    assert_eq!(code, Some(2), "{err}");
    assert!(error_line(&err).contains("TLS"), "{err}");
    let (code, _, err) = run(
        &db,
        "u",
        &["--mysql-ssl=off", "--mysql-ssl-mode=required"],
        "run",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(error_line(&err).contains("contradict"), "{err}");
}

#[test]
fn an_ed25519_account_runs_on_the_lean_client() {
    let db = MariaDb::start();
    db.sql(
        "INSTALL SONAME 'auth_ed25519';
         CREATE USER 'edu'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('pw');
         GRANT ALL ON *.* TO 'edu'@'%';",
    );
    let (code, out, err) = run(&db, "edu", &[], "prepare");
    assert_eq!(code, Some(0), "{out}\n{err}");
    let before = db.status("Com_stmt_execute");
    let scratch = Scratch::new("ed25519");
    let json_arg = format!("--json={}", scratch.path("r.json").display());
    let r = run(&db, "edu", &[&json_arg], "run");
    assert_lean_run(&r);
    assert!(
        r.1.contains("lean client, client_ed25519, no TLS"),
        "{}",
        r.1
    );
    let j = fleetbench_tests::json(&scratch.path("r.json"));
    let way = &j["totals"]["targets"][0]["connections"][0];
    assert_eq!(
        (&way["client"], &way["auth_plugin"], &way["tls"]),
        (&"lean".into(), &"client_ed25519".into(), &"".into()),
        "{j}"
    );
    assert!(
        db.status("Com_stmt_execute") > before,
        "statements reached the server"
    );
    // A wrong password is the server's refusal, in one line, never a hang.
    let port = format!("--mysql-port={}", db.port());
    let out = fleetbench_env(
        &[
            "oltp_point_select",
            "--mysql-host=127.0.0.1",
            &port,
            "--mysql-user=edu",
            "--mysql-password=wrong",
            "--tables=2",
            "--table-size=100",
            "--time=1",
            "run",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Access denied") && err.lines().count() == 1,
        "{err}"
    );
}
