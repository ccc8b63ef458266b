//! pgbench's schema and statements, as the facts of PostgreSQL 15's pgbench describe them:
//! the four tables, the initialisation steps' statements, and the built-in scripts'
//! statements in their two forms (values in the text for `-M simple`, `$n` parameters
//! for `-M extended` and `-M prepared`).

use std::fmt::Write;

use fleetbench_model::workloads::pgbench::{
    ACCOUNTS_PER_SCALE, Builtin, PartitionMethod, PgbenchConfig, TELLERS_PER_SCALE,
};

/// The tables, in pgbench's order of dropping them.
pub const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// One statement of the built-in scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    Begin,
    UpdateAccount,
    SelectAccount,
    UpdateTeller,
    UpdateBranch,
    InsertHistory,
    End,
}

impl Stmt {
    pub const ALL: [Stmt; 7] = [
        Stmt::Begin,
        Stmt::UpdateAccount,
        Stmt::SelectAccount,
        Stmt::UpdateTeller,
        Stmt::UpdateBranch,
        Stmt::InsertHistory,
        Stmt::End,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The statement with `$n` parameters, in the order [`Vals::params`] gives them.
    pub fn text(self) -> &'static str {
        match self {
            Stmt::Begin => "BEGIN",
            Stmt::UpdateAccount => {
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
            }
            Stmt::SelectAccount => "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            Stmt::UpdateTeller => {
                "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"
            }
            Stmt::UpdateBranch => {
                "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"
            }
            Stmt::InsertHistory => {
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)"
            }
            Stmt::End => "END",
        }
    }
}

/// The statements a built-in script runs, in order.
pub fn script(b: Builtin) -> &'static [Stmt] {
    use Stmt::*;
    match b {
        Builtin::TpcbLike => &Stmt::ALL,
        Builtin::SimpleUpdate => &[Begin, UpdateAccount, SelectAccount, InsertHistory, End],
        Builtin::SelectOnly => &[SelectAccount],
    }
}

/// One transaction's random values (pgbench's `\set` lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Vals {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
}

impl Vals {
    /// The parameters of `s`, in its `$n` order; the count is the slice's length.
    pub fn params(&self, s: Stmt, out: &mut [i64; 4]) -> usize {
        let p: &[i64] = match s {
            Stmt::Begin | Stmt::End => &[],
            Stmt::UpdateAccount => &[self.delta, self.aid],
            Stmt::SelectAccount => &[self.aid],
            Stmt::UpdateTeller => &[self.delta, self.tid],
            Stmt::UpdateBranch => &[self.delta, self.bid],
            Stmt::InsertHistory => &[self.tid, self.bid, self.aid, self.delta],
        };
        out[..p.len()].copy_from_slice(p);
        p.len()
    }

    /// `s` with the values in its text (`-M simple`), into `out` (cleared first).
    pub fn render(&self, s: Stmt, out: &mut String) {
        out.clear();
        let mut p = [0i64; 4];
        let n = self.params(s, &mut p);
        let text = s.text();
        let mut rest = text;
        // `$1`..`$4`: one digit each.
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let k = usize::from(rest.as_bytes()[i + 1] - b'1');
            if k < n {
                let _ = write!(out, "{}", p[k]);
            }
            rest = &rest[i + 2..];
        }
        out.push_str(rest);
        out.push(';');
    }
}

/// `DROP` of the four tables (step d).
pub fn drop_tables() -> String {
    format!("DROP TABLE IF EXISTS {}", TABLES.join(", "))
}

/// `CREATE TABLE`s of step t, with the fill factor, logging and partitions asked for.
pub fn create_tables(c: &PgbenchConfig) -> Vec<String> {
    let unlogged = if c.unlogged { "UNLOGGED " } else { "" };
    let ff = format!(" WITH (fillfactor={})", c.fillfactor);
    let mut out = vec![
        format!(
            "CREATE {unlogged}TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))"
        ),
        format!(
            "CREATE {unlogged}TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)){ff}"
        ),
        format!(
            "CREATE {unlogged}TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)){}",
            if c.partitions > 0 {
                format!(
                    " PARTITION BY {} (aid)",
                    c.partition_method.name().to_uppercase()
                )
            } else {
                ff.clone()
            }
        ),
        format!(
            "CREATE {unlogged}TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)){ff}"
        ),
    ];
    out.extend(partitions(c, unlogged, &ff));
    out
}

/// The partitions of pgbench_accounts: equal ranges of aids (the first from MINVALUE,
/// the last to MAXVALUE) or hash remainders.
fn partitions(c: &PgbenchConfig, unlogged: &str, ff: &str) -> Vec<String> {
    let n = u64::from(c.partitions);
    if n == 0 {
        return Vec::new();
    }
    let size = c.accounts().div_ceil(n);
    (1..=n)
        .map(|p| {
            let bounds = match c.partition_method {
                PartitionMethod::Range => {
                    let lo = if p == 1 {
                        "MINVALUE".to_string()
                    } else {
                        ((p - 1) * size + 1).to_string()
                    };
                    let hi = if p == n {
                        "MAXVALUE".to_string()
                    } else {
                        (p * size + 1).to_string()
                    };
                    format!("FOR VALUES FROM ({lo}) TO ({hi})")
                }
                PartitionMethod::Hash => {
                    format!("FOR VALUES WITH (MODULUS {n}, REMAINDER {})", p - 1)
                }
            };
            format!(
                "CREATE {unlogged}TABLE pgbench_accounts_{p} PARTITION OF pgbench_accounts {bounds}{ff}"
            )
        })
        .collect()
}

/// Step G for one agent: the small tables when it loads them, then its accounts.
pub fn server_generate(c: &PgbenchConfig) -> Vec<String> {
    let mut out = Vec::new();
    if c.load_small {
        out.push(format!(
            "INSERT INTO pgbench_branches (bid, bbalance) SELECT bid, 0 FROM generate_series(1, {}) AS bid",
            c.scale
        ));
        out.push(format!(
            "INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT tid, (tid - 1) / {TELLERS_PER_SCALE} + 1, 0 FROM generate_series(1, {}) AS tid",
            u64::from(c.scale) * TELLERS_PER_SCALE
        ));
    }
    if c.first_aid > 0 {
        out.push(format!(
            "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT aid, (aid - 1) / {ACCOUNTS_PER_SCALE} + 1, 0, '' FROM generate_series({}, {}) AS aid",
            c.first_aid, c.last_aid
        ));
    }
    out
}

/// The branch of account `aid`.
pub fn branch_of_account(aid: u64) -> u64 {
    (aid - 1) / ACCOUNTS_PER_SCALE + 1
}

/// Step v's statements.
pub const VACUUM: [&str; 4] = [
    "VACUUM ANALYZE pgbench_branches",
    "VACUUM ANALYZE pgbench_tellers",
    "VACUUM ANALYZE pgbench_accounts",
    "VACUUM ANALYZE pgbench_history",
];

/// What a run does first unless `-n`: as pgbench, vacuum the small tables and empty the
/// history.
pub const RUN_VACUUM: [&str; 3] = [
    "VACUUM pgbench_branches",
    "VACUUM pgbench_tellers",
    "TRUNCATE pgbench_history",
];

/// Step p's statements.
pub const PRIMARY_KEYS: [&str; 3] = [
    "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
    "ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
    "ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
];

/// Step f's statements.
pub const FOREIGN_KEYS: [&str; 5] = [
    "ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers",
    "ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_mode_puts_the_values_in_the_text() {
        let v = Vals {
            aid: 17,
            bid: 1,
            tid: 4,
            delta: -250,
        };
        let mut s = String::new();
        v.render(Stmt::UpdateAccount, &mut s);
        assert_eq!(
            s,
            "UPDATE pgbench_accounts SET abalance = abalance + -250 WHERE aid = 17;"
        );
        v.render(Stmt::InsertHistory, &mut s);
        assert_eq!(
            s,
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (4, 1, 17, -250, CURRENT_TIMESTAMP);"
        );
        v.render(Stmt::Begin, &mut s);
        assert_eq!(s, "BEGIN;");
    }

    #[test]
    fn scripts_run_pgbench_statements_in_order() {
        assert_eq!(script(Builtin::TpcbLike).len(), 7);
        assert_eq!(script(Builtin::SelectOnly), &[Stmt::SelectAccount]);
        assert!(!script(Builtin::SimpleUpdate).contains(&Stmt::UpdateTeller));
    }

    #[test]
    fn the_listed_commands_are_the_sets_then_the_statements() {
        for b in Builtin::ALL {
            let cmds = b.commands();
            assert_eq!(cmds.len(), b.sets() + script(b).len(), "{}", b.name());
            assert!(cmds[..b.sets()].iter().all(|c| c.starts_with("\\set ")));
            for (c, s) in cmds[b.sets()..].iter().zip(script(b)) {
                // The same statement, pgbench's :names for our $n parameters.
                let head = |t: &str| {
                    let h = t.split(['$', ':']).next().unwrap_or("");
                    h.trim_end_matches(';').trim().to_string()
                };
                assert_eq!(head(c), head(s.text()), "{c}");
            }
        }
    }

    #[test]
    fn range_partitions_cover_every_account() {
        let c = PgbenchConfig {
            scale: 1,
            partitions: 3,
            ..PgbenchConfig::default()
        };
        let ddl = create_tables(&c);
        assert!(ddl[2].ends_with("PARTITION BY RANGE (aid)"), "{}", ddl[2]);
        assert!(ddl[4].contains("FROM (MINVALUE) TO (33335)"), "{}", ddl[4]);
        assert!(ddl[5].contains("FROM (33335) TO (66669)"), "{}", ddl[5]);
        assert!(ddl[6].contains("FROM (66669) TO (MAXVALUE)"), "{}", ddl[6]);
        let hash = PgbenchConfig {
            partition_method: PartitionMethod::Hash,
            unlogged: true,
            ..c
        };
        let ddl = create_tables(&hash);
        assert!(ddl[0].starts_with("CREATE UNLOGGED TABLE"));
        assert!(ddl[6].contains("MODULUS 3, REMAINDER 2"), "{}", ddl[6]);
    }

    #[test]
    fn server_side_generation_loads_only_the_share() {
        let c = PgbenchConfig {
            scale: 2,
            first_aid: 100_001,
            last_aid: 200_000,
            ..PgbenchConfig::default()
        };
        let sql = server_generate(&c);
        assert_eq!(sql.len(), 1);
        assert!(sql[0].contains("generate_series(100001, 200000)"));
        assert_eq!(branch_of_account(100_000), 1);
        assert_eq!(branch_of_account(100_001), 2);
    }
}
