//! Database targets: `--target NAME=mysql://...` and `NAME=postgres://...` URLs, their
//! conflicts with the `--mysql-*` and `--pgsql-*` connection options, and `--table-map`.

use fleetbench_model::workloads::oltp::tls::SslMode;
use fleetbench_model::workloads::server::{Driver, Target};

use super::model::PlanError;
use super::values::flag;
use crate::cli::RawArgs;

/// The `--mysql-*` options that say where and as whom to connect: a `--target` URL says
/// all of them itself. (TLS and public-key options are not among them: targets without
/// their own take those.)
const CONNECTION_OPTIONS: [&str; 11] = [
    "mysql-host",
    "mysql-port",
    "mysql-socket",
    "mysql-user",
    "mysql-password",
    "mysql-db",
    "pgsql-host",
    "pgsql-port",
    "pgsql-user",
    "pgsql-password",
    "pgsql-db",
];

/// Refuses `--target`s that contradict each other (one name twice) or the `--mysql-*`
/// connection options: otherwise one of them would be silently ignored.
pub(super) fn check_targets(raw: &RawArgs) -> Result<(), PlanError> {
    let mut names: Vec<&str> = Vec::with_capacity(raw.target.len());
    for t in &raw.target {
        let name = t.split_once('=').map_or(t.as_str(), |(n, _)| n).trim();
        if names.contains(&name) {
            return Err(PlanError::TargetTwice(name.to_string()));
        }
        names.push(name);
    }
    let connection = raw
        .options
        .iter()
        .find(|(n, _)| CONNECTION_OPTIONS.contains(&n.as_str()));
    if let (Some(target), Some((option, _))) = (names.first(), connection) {
        return Err(PlanError::TargetAndConnection {
            target: target.to_string(),
            option: option.clone(),
        });
    }
    Ok(())
}

/// Parses `NAME=mysql://USER:PASSWORD@HOST:PORT/DB[?socket=PATH]` or
/// `NAME=postgres://USER:PASSWORD@HOST:PORT/DB[?sslmode=...]` (`postgresql://` too). User
/// defaults to sbtest, password to empty, port to 3306 (5432), database to sbtest; `%XX`
/// escapes are decoded.
pub fn parse_target(s: &str) -> Result<Target, PlanError> {
    let bad = |why: &str| PlanError::Target(redact(s), why.to_string());
    let (name, url) = s
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=mysql://USER:PASSWORD@HOST:PORT/DB"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(bad("the name may hold letters, digits, '_', '-' and '.'"));
    }
    let (driver, rest) = if let Some(rest) = url.strip_prefix("mysql://") {
        (Driver::Mysql, rest)
    } else if let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    {
        (Driver::Pgsql, rest)
    } else {
        return Err(bad("the URL must start with mysql:// or postgres://"));
    };
    let default_port = match driver {
        Driver::Mysql => 3306,
        Driver::Pgsql => 5432,
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    let (user, password) = credentials(auth, &bad)?;
    let (hostport, db) = hostpart.split_once('/').unwrap_or((hostpart, ""));
    let (host, port) = host_and_port(hostport, default_port, &bad)?;
    let mut host = host.to_string();
    let mut port = port;
    let (socket, sec) = match driver {
        Driver::Mysql => url_parameters(query, &bad)?,
        Driver::Pgsql => {
            // libpq's ways to a Unix socket: the directory as the host, %-escaped
            // (postgres://%2Fvar%2Frun%2Fpostgresql/db), or `?host=/dir`; `?port=` too.
            host = decode(&host).ok_or_else(|| bad("bad %-escape"))?;
            let (sec, h, p) = libpq_parameters(query, &bad)?;
            if let Some(h) = h {
                host = h;
            }
            if let Some(p) = p {
                port = p;
            }
            if host.contains(',') {
                return Err(bad("host lists are not supported: give one host"));
            }
            (None, sec)
        }
    };
    if host.is_empty() && socket.is_none() {
        return Err(bad("no host"));
    }
    Ok(Target {
        name: name.to_string(),
        driver,
        host: if host.is_empty() {
            "localhost".into()
        } else {
            host
        },
        port,
        socket,
        user,
        password,
        database: if db.is_empty() {
            "sbtest".into()
        } else {
            decode(db).ok_or_else(|| bad("bad %-escape"))?
        },
        ..sec
    })
}

/// What a target URL's error says for a reason.
type Bad<'a> = dyn Fn(&str) -> PlanError + 'a;

/// The URL's `USER:PASSWORD` (decoded), by default sbtest and no password.
fn credentials(auth: Option<&str>, bad: &Bad) -> Result<(String, String), PlanError> {
    Ok(match auth {
        Some(a) => match a.split_once(':') {
            Some((u, p)) => (
                decode(u).ok_or_else(|| bad("bad %-escape"))?,
                decode(p).ok_or_else(|| bad("bad %-escape"))?,
            ),
            None => (decode(a).ok_or_else(|| bad("bad %-escape"))?, String::new()),
        },
        None => ("sbtest".to_string(), String::new()),
    })
}

/// The URL's `HOST:PORT` (`default_port` without one); an IPv6 literal stands in brackets, as
/// in any URL: `[::1]:3306`.
fn host_and_port<'a>(
    hostport: &'a str,
    default_port: u16,
    bad: &Bad,
) -> Result<(&'a str, u16), PlanError> {
    let port_of = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| bad("the port must be a number from 1 to 65535"))
    };
    if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
        if h.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(bad("not an IPv6 address between '[' and ']'"));
        }
        return Ok(match after {
            "" => (h, default_port),
            p => match p.strip_prefix(':') {
                Some(p) => (h, port_of(p)?),
                None => return Err(bad("expected ':PORT' after ']'")),
            },
        });
    }
    Ok(match hostport.rsplit_once(':') {
        Some((h, _)) if h.contains(':') => {
            return Err(bad("write an IPv6 address in brackets: [::1]:3306"));
        }
        Some((h, p)) => (h, port_of(p)?),
        None => (hostport, default_port),
    })
}

/// The URL's parameters (`?socket=PATH&ssl-mode=...`): the socket, and a target holding
/// the TLS and public-key settings.
fn url_parameters(query: &str, bad: &Bad) -> Result<(Option<String>, Target), PlanError> {
    let mut socket = None;
    let mut sec = Target::default();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad("URL parameters are KEY=VALUE"))?;
        let v = decode(v).ok_or_else(|| bad("bad %-escape"))?;
        match k.replace('_', "-").as_str() {
            "socket" => socket = Some(v),
            "ssl-mode" => {
                sec.ssl.mode = SslMode::parse(&v)
                    .ok_or_else(|| bad(&format!("ssl-mode must be {}", SslMode::NAMES)))?
            }
            "ssl-ca" => sec.ssl.ca = Some(v.into()),
            "ssl-cert" => sec.ssl.cert = Some(v.into()),
            "ssl-key" => sec.ssl.key = Some(v.into()),
            "server-public-key" => sec.server_public_key = Some(v.into()),
            "get-server-public-key" => {
                sec.get_server_public_key = flag(&Some(v), "get-server-public-key", false)
                    .map_err(|_| bad("get-server-public-key must be on or off"))?
            }
            _ => {
                return Err(bad(
                    "URL parameters understood: socket, ssl-mode, ssl-ca, ssl-cert, ssl-key, \
                     server-public-key, get-server-public-key",
                ));
            }
        }
    }
    Ok((socket, sec))
}

/// A postgres:// URL's parameters, libpq's names: `sslmode`, `sslrootcert`, `sslcert`,
/// `sslkey`, and `host` and `port`, which stand for the URL's own (a host that is a
/// directory is the server's Unix socket in it, as for `--pgsql-host`).
fn libpq_parameters(
    query: &str,
    bad: &Bad,
) -> Result<(Target, Option<String>, Option<u16>), PlanError> {
    let mut sec = Target::default();
    let (mut host, mut port) = (None, None);
    // libpq's default.
    sec.ssl.mode = SslMode::Preferred;
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad("URL parameters are KEY=VALUE"))?;
        let v = decode(v).ok_or_else(|| bad("bad %-escape"))?;
        match k {
            "sslmode" => {
                sec.ssl.mode = SslMode::parse_libpq(&v)
                    .ok_or_else(|| bad(&format!("sslmode must be {}", SslMode::LIBPQ_NAMES)))?
            }
            "sslrootcert" => sec.ssl.ca = Some(v.into()),
            "sslcert" => sec.ssl.cert = Some(v.into()),
            "sslkey" => sec.ssl.key = Some(v.into()),
            // An empty one means the default, as in libpq: the URL's own host.
            "host" => host = Some(v).filter(|h| !h.is_empty()),
            "port" => {
                port = Some(
                    v.parse::<u16>()
                        .ok()
                        .filter(|&p| p > 0)
                        .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?,
                )
            }
            _ => {
                return Err(bad(
                    "URL parameters understood: host, port, sslmode, sslrootcert, sslcert, sslkey",
                ));
            }
        }
    }
    Ok((sec, host, port))
}

/// The target text without its password, for messages.
fn redact(s: &str) -> String {
    match (s.find("://"), s.rfind('@')) {
        (Some(a), Some(b)) if b > a => {
            let auth = &s[a + 3..b];
            match auth.split_once(':') {
                Some((u, _)) => format!("{}{u}:***{}", &s[..a + 3], &s[b..]),
                None => s.to_string(),
            }
        }
        _ => s.to_string(),
    }
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses 'sbtest1-5=master,sbtest6-10=slave' (the 'sbtest' prefix is optional) into the
/// target index of each table 1..=tables. Every table must be mapped exactly once.
pub fn parse_table_map(s: &str, tables: u32, targets: &[Target]) -> Result<Vec<usize>, PlanError> {
    let mut map: Vec<Option<usize>> = vec![None; tables as usize];
    for entry in s.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(PlanError::TableMap("an empty item in the list".into()));
        }
        let (range, name) = entry
            .split_once('=')
            .ok_or_else(|| PlanError::TableMap(format!("'{entry}' is not TABLES=TARGET")))?;
        let t = targets
            .iter()
            .position(|t| t.name == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                PlanError::TableMap(format!(
                    "unknown target '{}' (targets: {})",
                    name.trim(),
                    names.join(", ")
                ))
            })?;
        let range = range.trim();
        let range = range.strip_prefix("sbtest").unwrap_or(range);
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let lo = lo.trim().trim_start_matches("sbtest");
        let hi = hi.trim().trim_start_matches("sbtest");
        let (lo, hi): (u32, u32) = match (lo.parse(), hi.parse()) {
            (Ok(a), Ok(b)) if a >= 1 && a <= b => (a, b),
            _ => {
                return Err(PlanError::TableMap(format!(
                    "'{entry}': expected sbtestA-B=TARGET with 1 <= A <= B"
                )));
            }
        };
        if hi > tables {
            return Err(PlanError::TableMap(format!(
                "'{entry}' names sbtest{hi}, but --tables={tables}"
            )));
        }
        for n in lo..=hi {
            if map[n as usize - 1].replace(t).is_some() {
                return Err(PlanError::TableMap(format!("sbtest{n} is mapped twice")));
            }
        }
    }
    let unmapped: Vec<String> = map
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_none())
        .map(|(i, _)| format!("sbtest{}", i + 1))
        .collect();
    if !unmapped.is_empty() {
        return Err(PlanError::TableMap(format!(
            "no target for {}",
            unmapped.join(", ")
        )));
    }
    Ok(map.into_iter().map(|m| m.unwrap_or(0)).collect())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::plan;
    use super::*;
    use crate::plan::*;

    #[test]
    fn ipv6_targets_ports_and_empty_items() {
        let t = parse_target("a=mysql://u:p@[::1]:3307/db").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 3307));
        let t = parse_target("a=mysql://u:p@[fe80::1]/db").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", 3306));
        assert!(parse_target("a=mysql://u:p@::1:3306/db").is_err());
        let t = parse_target("pg=postgres://u:p@db/x?sslmode=verify-full&sslrootcert=/ca").unwrap();
        assert_eq!(
            (t.driver, t.port, t.database.as_str()),
            (Driver::Pgsql, 5432, "x")
        );
        assert_eq!(t.ssl.mode, SslMode::VerifyIdentity);
        assert_eq!(t.ssl.ca.as_deref(), Some(std::path::Path::new("/ca")));
        let t = parse_target("pg=postgresql://db:5433").unwrap();
        assert_eq!((t.driver, t.port), (Driver::Pgsql, 5433));
        assert!(parse_target("pg=postgres://db/x?socket=/tmp").is_err());
        // libpq's Unix sockets: the directory as the host, %-escaped, or ?host=.
        let t = parse_target("pg=postgres://u@%2Fvar%2Frun%2Fpostgresql:5433/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("/var/run/postgresql", 5433));
        let t = parse_target("pg=postgres:///x?host=/tmp/pg&port=5434").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.database.as_str()),
            ("/tmp/pg", 5434, "x")
        );
        assert!(parse_target("pg=postgres://a,b/x").is_err());
        assert!(parse_target("pg=postgres://db/x?port=0").is_err());
        assert_eq!(parse_target("pg=postgres://db/x?host=").unwrap().host, "db");
        assert!(parse_target("pg=oracle://db/x").is_err());
        assert!(parse_target("a=mysql://u:p@[::1/db").is_err());
        assert!(parse_target("a=mysql://u:p@[nohost]:1/db").is_err());
        for port in ["70000", "0", "-1", "x"] {
            let e = parse_target(&format!("a=mysql://u:p@db:{port}/db")).unwrap_err();
            assert!(e.to_string().contains("from 1 to 65535"), "{port}: {e}");
        }
        for h in ["--mysql-host=[::1]", "--mysql-host=::1"] {
            let p = plan(&["oltp_read_write", h, "run"]).unwrap();
            let Workload::Oltp(o) = &p.workload else {
                panic!("not OLTP")
            };
            assert_eq!(o.config.targets[0].host, "::1", "{h}");
        }
        assert!(plan(&["oltp_read_write", "--mysql-port=70000", "run"]).is_err());
        assert!(plan(&["oltp_read_write", "--mysql-port=0", "run"]).is_err());
        assert!(
            plan(&[
                "oltp_read_write",
                "--tables=2",
                "--target=a=mysql://h/d",
                "--table-map=sbtest1=a,,sbtest2=a",
                "run"
            ])
            .is_err()
        );
        assert!(plan(&["fileio", "--file-extra-flags=sync,,direct", "prepare"]).is_err());
        assert!(plan(&["cpu", "--agents=a:1,,b:2", "run"]).is_err());
        assert!(crate::sweep::parse_thread_list("4,,8").is_err());
    }

    #[test]
    fn conflicting_targets_and_agents_are_refused() {
        let a = "--target=a=mysql://u:p@db1:3306/sbtest";
        let a2 = "--target=a=mysql://u:p@db2:3306/sbtest";
        let e = plan(&["oltp_read_write", a, a2, "run"]).unwrap_err();
        assert_eq!(e, PlanError::TargetTwice("a".into()));
        assert!(
            e.to_string().starts_with("--target a is given twice"),
            "{e}"
        );
        let e = plan(&["tpcc", a, a2, "prepare"]).unwrap_err();
        assert_eq!(e, PlanError::TargetTwice("a".into()));
        for option in CONNECTION_OPTIONS {
            let given = format!("--{option}=x");
            for args in [
                ["oltp_read_write", a, &given, "run"],
                ["tpcc", &given, a, "prepare"],
            ] {
                let e = plan(&args).unwrap_err();
                let msg = e.to_string();
                assert!(
                    msg.contains("--target a") && msg.contains(&format!("--{option} ")),
                    "{msg}"
                );
                assert!(!msg.contains('\n'), "{msg}");
            }
        }
        // tpcc-mysql's letters are the same options.
        assert!(matches!(
            plan(&["tpcc", a, "-P3307", "prepare"]),
            Err(PlanError::TargetAndConnection { .. })
        ));
        // TLS options are not connection options: targets without their own take them.
        assert!(plan(&["oltp_read_write", a, "--mysql-ssl-mode=required", "run"]).is_ok());
        // Two names, or one target alone, plan.
        assert!(
            plan(&[
                "oltp_read_write",
                "--tables=2",
                a,
                "--target=b=mysql://u:p@db1:3306/sbtest",
                "--table-map=sbtest1=a,sbtest2=b",
                "run"
            ])
            .is_ok()
        );
        // The same agent twice, as given or spelled otherwise.
        for (list, says) in [
            (&["--agents=a:7600,a:7600"][..], "a:7600 twice"),
            (&["--agents=a:7600", "--agents=b:1,a:7600"], "a:7600 twice"),
            (
                &["--agents=Host:7600,host:07600"],
                "Host:7600 twice (as Host:7600 and host:07600)",
            ),
            (
                &["--agents=[::1]:7600,[0::1]:7600"],
                "[::1]:7600 twice (as [::1]:7600 and [0::1]:7600)",
            ),
            (
                &["--agents=127.0.0.1:7600,127.0.0.1:7600"],
                "127.0.0.1:7600 twice",
            ),
        ] {
            let args: Vec<&str> = ["cpu"]
                .iter()
                .chain(list)
                .chain(&["run"])
                .copied()
                .collect();
            let e = plan(&args).unwrap_err();
            assert!(matches!(e, PlanError::AgentTwice(..)), "{list:?}: {e}");
            assert!(e.to_string().contains(says), "{list:?}: {e}");
        }
        assert!(plan(&["cpu", "--agents=a:7600,a:7601,b:7600", "run"]).is_ok());
        assert!(plan(&["cpu", "--agents=localhost:7600,127.0.0.1:7600", "run"]).is_ok());
    }
}
