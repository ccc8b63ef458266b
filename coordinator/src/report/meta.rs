//! What a result says about itself (`meta` in the JSON, a line of the text report): the
//! run's id, when it ran, the user's `--tag key=value` labels, the command line with its
//! secrets masked, and which fleetbench build produced it.

/// The git commit fleetbench was built from ("unknown" outside a git checkout).
pub const COMMIT: &str = match option_env!("FLEETBENCH_COMMIT") {
    Some(c) => c,
    None => "unknown",
};

/// Labels of a run, in the order given.
pub type Tags = Vec<(String, String)>;

/// Most tags one run takes, and their longest key and value: labels, not payloads.
const MAX_TAGS: usize = 64;
const MAX_KEY: usize = 64;
const MAX_VALUE: usize = 256;

/// Parses `--tag key=value` arguments: keys of letters, digits, `_`, `-` and `.`, each once;
/// values of printable characters.
pub fn parse_tags(raw: &[String]) -> Result<Tags, String> {
    if raw.len() > MAX_TAGS {
        return Err(format!("at most {MAX_TAGS} tags"));
    }
    let mut tags: Tags = Vec::new();
    for t in raw {
        let Some((k, v)) = t.split_once('=') else {
            return Err(format!("'{t}' is not key=value"));
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty()
            || k.len() > MAX_KEY
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(format!(
                "tag key '{k}' must be 1 to {MAX_KEY} letters, digits, _, - or ."
            ));
        }
        if v.len() > MAX_VALUE || v.chars().any(char::is_control) {
            return Err(format!(
                "tag value of '{k}' must be at most {MAX_VALUE} printable characters"
            ));
        }
        if tags.iter().any(|(seen, _)| seen == k) {
            return Err(format!("tag '{k}' given twice"));
        }
        tags.push((k.to_string(), v.to_string()));
    }
    Ok(tags)
}

/// Options whose value is a secret.
fn is_secret_option(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    n.contains("password") || n.contains("passwd") || n.contains("token") || n.contains("secret")
}

/// The command line as it can be shown and stored: `words` (from [`masked_args`]) as one
/// line, each quoted for a shell when it needs it.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of the command line, the values of password, token and secret options and
/// the passwords in `scheme://user:password@host` URLs replaced by `***`: for the result's
/// metadata ([`shell_line`]) and a script's `sysbench.cmdline.argv`.
pub fn masked_args(args: &[std::ffi::OsString]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut mask_next = false;
    // tpcc-mysql's letters: `-p PASSWORD` or `-pPASSWORD`.
    let tpcc = args.iter().any(|a| a == "tpcc");
    for a in args {
        let a = a.to_string_lossy();
        let shown = if mask_next {
            mask_next = false;
            "***".to_string()
        } else if tpcc && a == "-p" {
            mask_next = true;
            a.to_string()
        } else if tpcc && a.starts_with("-p") {
            "-p***".to_string()
        } else if let Some((name, _)) = a.split_once('=')
            && name.starts_with('-')
            && is_secret_option(name)
        {
            format!("{name}=***")
        } else if a.starts_with("--") && is_secret_option(&a) {
            // `--mysql-password VALUE`: the next word is the secret. (A file of the token,
            // --token-file, names a path, not a secret: shown.)
            mask_next = !a.ends_with("-file");
            a.to_string()
        } else {
            mask_url_passwords(&a)
        };
        out.push(shown);
    }
    out
}

/// Replaces the password of every `scheme://user:password@` in `s` by `***`.
fn mask_url_passwords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', or at the end.
        let end = tail.find('/').unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `s` as one shell word: as it is when that is safe, else single-quoted.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@%+*".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A moment as RFC 3339 UTC (`2026-12-01T23:04:05Z`); None before the epoch.
pub fn utc(t: std::time::SystemTime) -> Option<String> {
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| rfc3339(d.as_secs()))
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_date(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01, by 400-year eras.
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the year from March 1st
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &[&str]) -> String {
        let v: Vec<std::ffi::OsString> = words.iter().map(Into::into).collect();
        shell_line(&masked_args(&v))
    }

    #[test]
    fn a_scripts_argv_has_the_words_unquoted_and_the_secrets_masked() {
        let v: Vec<std::ffi::OsString> = ["fleetbench", "my test.lua", "--token", "t0k", "run"]
            .iter()
            .map(Into::into)
            .collect();
        assert_eq!(
            masked_args(&v),
            ["fleetbench", "my test.lua", "--token", "***", "run"]
        );
        assert_eq!(
            shell_line(&masked_args(&v)),
            "fleetbench 'my test.lua' --token *** run"
        );
    }

    #[test]
    fn secrets_never_reach_the_command_line_shown() {
        assert_eq!(
            line(&[
                "fleetbench",
                "--mysql-password=hunter2",
                "oltp_read_write",
                "run"
            ]),
            "fleetbench --mysql-password=*** oltp_read_write run"
        );
        assert_eq!(
            line(&[
                "fleetbench",
                "--mysql-password",
                "hunter2",
                "--pgsql-password=x",
                "run"
            ]),
            "fleetbench --mysql-password *** --pgsql-password=*** run"
        );
        // tpcc-mysql's letter, apart or joined; elsewhere -p is no password.
        assert_eq!(
            line(&["fleetbench", "tpcc", "-p", "pw", "-pPW", "-P3306", "run"]),
            "fleetbench tpcc -p *** -p*** -P3306 run"
        );
        assert_eq!(
            line(&["fleetbench", "cpu", "-p", "x", "run"]),
            "fleetbench cpu -p x run"
        );
        assert_eq!(
            line(&[
                "fleetbench",
                "--target",
                "a=mysql://bench:hunter2@db1:3306/sbtest",
                "run"
            ]),
            "fleetbench --target a=mysql://bench:***@db1:3306/sbtest run"
        );
        // Two URLs in one word, one without a password; a token file's path stays.
        assert_eq!(
            mask_url_passwords("mysql://u:p@h/x,mysql://v@g/y"),
            "mysql://u:***@h/x,mysql://v@g/y"
        );
        assert_eq!(
            line(&[
                "fleetbench",
                "--token-file",
                "/etc/fleetbench/token",
                "--tag",
                "note=a b"
            ]),
            "fleetbench --token-file /etc/fleetbench/token --tag 'note=a b'"
        );
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        for (secs, date) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_796_166_245, "2026-12-01T23:04:05Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ] {
            assert_eq!(rfc3339(secs), date);
        }
    }

    #[test]
    fn tags_are_checked_labels() {
        assert_eq!(
            parse_tags(&["pool=8G".into(), "server.version = 10.11".into()]).unwrap(),
            [
                ("pool".to_string(), "8G".to_string()),
                ("server.version".to_string(), "10.11".to_string())
            ]
        );
        for bad in ["pool", "=8G", "a b=1", "pool=x\ny"] {
            assert!(parse_tags(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(parse_tags(&["a=1".into(), "a=2".into()]).is_err());
    }
}
