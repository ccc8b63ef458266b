//! pgbench (PostgreSQL 15) as `fleetbench pgbench` runs it: the built-in scripts, the
//! query modes, the initialisation steps and how the accounts are shared out over agents.

use super::server::{Driver, Target};

/// Accounts, tellers and branches per unit of scale (pgbench's).
pub const ACCOUNTS_PER_SCALE: u64 = 100_000;
pub const TELLERS_PER_SCALE: u64 = 10;

/// The largest scale accepted: pgbench's int aids hold up to 21,474 units.
pub const MAX_SCALE: u32 = 20_000;

/// The most partitions of pgbench_accounts (pgbench's own bound is the int range; this
/// keeps a plan's DDL reasonable).
pub const MAX_PARTITIONS: u32 = 10_000;

/// The most tries of one transaction (`--max-tries`).
pub const MAX_TRIES: u32 = 1_000_000;

/// pgbench's built-in scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    TpcbLike,
    SimpleUpdate,
    SelectOnly,
}

impl Builtin {
    pub const ALL: [Builtin; 3] = [
        Builtin::TpcbLike,
        Builtin::SimpleUpdate,
        Builtin::SelectOnly,
    ];

    /// The name `-b` takes.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
        }
    }

    /// How pgbench's report describes it ("transaction type: <builtin: ...>").
    pub fn title(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "TPC-B (sort of)",
            Builtin::SimpleUpdate => "simple update",
            Builtin::SelectOnly => "select only",
        }
    }

    /// The script's commands as pgbench lists them (`-r`, and the command numbers of a
    /// client's abort message): its `\set` lines first, then one line per statement.
    pub fn commands(self) -> &'static [&'static str] {
        const SET_AID: &str = "\\set aid random(1, 100000 * :scale)";
        const SETS: [&str; 4] = [
            SET_AID,
            "\\set bid random(1, 1 * :scale)",
            "\\set tid random(1, 10 * :scale)",
            "\\set delta random(-5000, 5000)",
        ];
        const BEGIN: &str = "BEGIN;";
        const UPDATE_ACCOUNT: &str =
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;";
        const SELECT_ACCOUNT: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;";
        const INSERT_HISTORY: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);";
        match self {
            Builtin::TpcbLike => &[
                SETS[0],
                SETS[1],
                SETS[2],
                SETS[3],
                BEGIN,
                UPDATE_ACCOUNT,
                SELECT_ACCOUNT,
                "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;",
                "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;",
                INSERT_HISTORY,
                "END;",
            ],
            Builtin::SimpleUpdate => &[
                SETS[0],
                SETS[1],
                SETS[2],
                SETS[3],
                BEGIN,
                UPDATE_ACCOUNT,
                SELECT_ACCOUNT,
                INSERT_HISTORY,
                "END;",
            ],
            Builtin::SelectOnly => &[SET_AID, SELECT_ACCOUNT],
        }
    }

    /// How many of [`Builtin::commands`] are `\set` lines (they come first).
    pub fn sets(self) -> usize {
        match self {
            Builtin::SelectOnly => 1,
            _ => 4,
        }
    }

    /// Its index in [`Builtin::ALL`] (the run's transaction-type slot).
    pub fn index(self) -> usize {
        Builtin::ALL.iter().position(|&b| b == self).unwrap_or(0)
    }

    /// The script `name` names: its full name or, as pgbench allows, a prefix of only
    /// one of them.
    pub fn find(name: &str) -> Result<Builtin, String> {
        if let Some(b) = Builtin::ALL.into_iter().find(|b| b.name() == name) {
            return Ok(b);
        }
        let matches: Vec<Builtin> = Builtin::ALL
            .into_iter()
            .filter(|b| !name.is_empty() && b.name().starts_with(name))
            .collect();
        match matches[..] {
            [b] => Ok(b),
            [] => Err(format!(
                "no builtin script found for name \"{name}\" (available: tpcb-like, simple-update, select-only)"
            )),
            _ => Err(format!("ambiguous builtin name \"{name}\"")),
        }
    }
}

/// The most scripts one run draws from (`-b` and `-f` together): each has a transaction
/// type slot of its own in the results, and there are five.
pub const MAX_SCRIPTS: usize = 5;

/// A script a run draws its transactions from.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    Builtin(Builtin),
    /// A script file (`-f`): its name as given and its text.
    File {
        name: String,
        text: String,
    },
}

impl Script {
    /// How pgbench's report names it: "<builtin: TPC-B (sort of)>" or the file's name.
    pub fn title(&self) -> String {
        match self {
            Script::Builtin(b) => format!("<builtin: {}>", b.title()),
            Script::File { name, .. } => name.clone(),
        }
    }

    pub fn builtin(&self) -> Option<Builtin> {
        match self {
            Script::Builtin(b) => Some(*b),
            Script::File { .. } => None,
        }
    }

    /// The script's text in pgbench's language (a built-in one written out).
    pub fn text(&self) -> String {
        match self {
            Script::Builtin(b) => b.commands().join("\n"),
            Script::File { text, .. } => text.clone(),
        }
    }

    /// Its commands as `-r` lists them (a file that does not parse has none: it was
    /// refused before the run).
    pub fn commands(&self) -> Vec<String> {
        match self {
            Script::Builtin(b) => b.commands().iter().map(|c| c.to_string()).collect(),
            Script::File { text, .. } => fleetbench_pgscript::Program::parse(text)
                .map(|p| p.listing)
                .unwrap_or_default(),
        }
    }
}

/// `-M`: how statements reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Simple query protocol, values in the text.
    #[default]
    Simple,
    /// Extended protocol with an unnamed statement parsed each time.
    Extended,
    /// Extended protocol with statements prepared once per connection.
    Prepared,
}

impl QueryMode {
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }

    pub fn parse(s: &str) -> Option<QueryMode> {
        [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// `--partition-method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionMethod {
    #[default]
    Range,
    Hash,
}

impl PartitionMethod {
    pub fn name(self) -> &'static str {
        match self {
            PartitionMethod::Range => "range",
            PartitionMethod::Hash => "hash",
        }
    }

    pub fn parse(s: &str) -> Option<PartitionMethod> {
        match s {
            "range" => Some(PartitionMethod::Range),
            "hash" => Some(PartitionMethod::Hash),
            _ => None,
        }
    }
}

/// What one Prepare call does: one of pgbench's initialisation steps, or what a run does
/// before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Step {
    /// `d`: drop the pgbench_* tables.
    Drop,
    /// `t`: create them.
    #[default]
    Create,
    /// `g`: load rows from the client (COPY), each agent its share of the accounts.
    Generate,
    /// `G`: have the server generate them (INSERT ... SELECT generate_series), each
    /// agent its share.
    ServerGenerate,
    /// `v`: VACUUM ANALYZE the four tables.
    Vacuum,
    /// `p`: primary keys.
    PrimaryKeys,
    /// `f`: foreign keys.
    ForeignKeys,
    /// Before a run: the tables are there; the summary says the scale (branches).
    Check,
    /// Before a run (unless `-n`): vacuum branches and tellers, empty the history.
    RunVacuum,
    /// Before g or G (one agent): empty the four tables, as pgbench's generate does first.
    Truncate,
}

impl Step {
    pub const ALL: [Step; 10] = [
        Step::Drop,
        Step::Create,
        Step::Generate,
        Step::ServerGenerate,
        Step::Vacuum,
        Step::PrimaryKeys,
        Step::ForeignKeys,
        Step::Check,
        Step::RunVacuum,
        Step::Truncate,
    ];

    /// The step's name on the wire: pgbench's letter, or "check" / "run-vacuum".
    pub fn name(self) -> &'static str {
        match self {
            Step::Drop => "d",
            Step::Create => "t",
            Step::Generate => "g",
            Step::ServerGenerate => "G",
            Step::Vacuum => "v",
            Step::PrimaryKeys => "p",
            Step::ForeignKeys => "f",
            Step::Check => "check",
            Step::RunVacuum => "run-vacuum",
            Step::Truncate => "truncate",
        }
    }

    pub fn from_name(s: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|x| x.name() == s)
    }

    /// How pgbench's "done in" line names the step's time.
    pub fn label(self) -> &'static str {
        match self {
            Step::Drop => "drop tables",
            Step::Create => "create tables",
            Step::Generate => "client-side generate",
            Step::ServerGenerate => "server-side generate",
            Step::Vacuum => "vacuum",
            Step::PrimaryKeys => "primary keys",
            Step::ForeignKeys => "foreign keys",
            Step::Check => "check",
            Step::RunVacuum => "vacuum",
            Step::Truncate => "truncate",
        }
    }

    /// The step's line as pgbench prints it when it begins.
    pub fn banner(self) -> &'static str {
        match self {
            Step::Drop => "dropping old tables...",
            Step::Create => "creating tables...",
            Step::Generate => "generating data (client-side)...",
            Step::ServerGenerate => "generating data (server-side)...",
            Step::Vacuum => "vacuuming...",
            Step::PrimaryKeys => "creating primary keys...",
            Step::ForeignKeys => "creating foreign keys...",
            Step::Check => "checking the tables...",
            Step::RunVacuum => "starting vacuum...",
            Step::Truncate => "emptying the tables...",
        }
    }

    /// Whether every agent takes a share of the step (the loads), rather than one.
    pub fn spread(self) -> bool {
        matches!(self, Step::Generate | Step::ServerGenerate)
    }

    /// `-I`'s letters as steps, in the order given; spaces are ignored as in pgbench.
    pub fn parse_letters(s: &str) -> Result<Vec<Step>, String> {
        let mut out = Vec::new();
        for c in s.chars().filter(|c| !c.is_whitespace()) {
            let step = match c {
                'd' => Step::Drop,
                't' => Step::Create,
                'g' => Step::Generate,
                'G' => Step::ServerGenerate,
                'v' => Step::Vacuum,
                'p' => Step::PrimaryKeys,
                'f' => Step::ForeignKeys,
                _ => {
                    return Err(format!(
                        "unrecognized initialization step \"{c}\" (allowed step characters are: \"d\", \"t\", \"g\", \"G\", \"v\", \"p\", \"f\")"
                    ));
                }
            };
            out.push(step);
        }
        if out.contains(&Step::Generate) && out.contains(&Step::ServerGenerate) {
            return Err(
                "-I: steps \"g\" and \"G\" exclude each other: generate the data once".into(),
            );
        }
        Ok(out)
    }
}

/// A pgbench run's or initialisation step's options, as the coordinator plans them and an
/// agent receives them (with its own share of the accounts for a load).
#[derive(Debug, Clone, PartialEq)]
pub struct PgbenchConfig {
    pub target: Target,
    pub scale: u32,
    /// The scripts with their weights (a run draws one per transaction); a script's place
    /// here is its transaction type slot.
    pub scripts: Vec<(Script, u32)>,
    /// `-D NAME=VALUE`: variables every client starts with.
    pub defines: Vec<(String, String)>,
    /// `-C`: a new connection for every transaction.
    pub connect_each: bool,
    /// `-l`: each transaction is logged as it ends, with this share of them kept
    /// (`--sampling-rate`; None: no log).
    pub log_sampling: Option<f64>,
    pub mode: QueryMode,
    pub max_tries: u32,
    pub step: Step,
    pub fillfactor: u32,
    pub unlogged: bool,
    pub partitions: u32,
    pub partition_method: PartitionMethod,
    /// A load's share of pgbench_accounts, first..=last aid (0..=0: none).
    pub first_aid: u64,
    pub last_aid: u64,
    /// This agent loads pgbench_branches and pgbench_tellers too.
    pub load_small: bool,
    /// A run: the threads this agent runs its clients on (its share of `-j`), each client
    /// a cooperative worker of one thread's epoll loop, as pgbench's threads multiplex
    /// their clients' connections; 0: one thread per client.
    pub jobs: u32,
    /// A run's `-L` in microseconds (0: none): transactions above it are late; with a
    /// rate, one already that late when a client could start it is skipped.
    pub latency_limit_us: u64,
    /// A run's `-t`: transactions each client runs (0: the time or the agent's event
    /// limit ends the run).
    pub transactions_per_client: u64,
    /// A run's `-r`: each command is timed and reported.
    pub per_statement: bool,
}

impl Default for PgbenchConfig {
    fn default() -> Self {
        PgbenchConfig {
            target: Target {
                driver: Driver::Pgsql,
                ..Target::default()
            },
            scale: 1,
            scripts: vec![(Script::Builtin(Builtin::TpcbLike), 1)],
            defines: Vec::new(),
            connect_each: false,
            log_sampling: None,
            mode: QueryMode::Simple,
            max_tries: 1,
            step: Step::Create,
            fillfactor: 100,
            unlogged: false,
            partitions: 0,
            partition_method: PartitionMethod::Range,
            first_aid: 0,
            last_aid: 0,
            load_small: false,
            jobs: 0,
            latency_limit_us: 0,
            transactions_per_client: 0,
            per_statement: false,
        }
    }
}

impl PgbenchConfig {
    /// Accounts in all.
    pub fn accounts(&self) -> u64 {
        u64::from(self.scale) * ACCOUNTS_PER_SCALE
    }

    /// The bounds both sides hold a configuration to.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.driver != Driver::Pgsql {
            return Err("pgbench runs against PostgreSQL targets only".into());
        }
        if self.scale == 0 || self.scale > MAX_SCALE {
            return Err(format!(
                "invalid scaling factor: {} (1..{MAX_SCALE})",
                self.scale
            ));
        }
        if self.scripts.is_empty() || self.scripts.iter().all(|(_, w)| *w == 0) {
            return Err("total script weight must not be zero".into());
        }
        if self.scripts.len() > MAX_SCRIPTS {
            return Err(format!(
                "at most {MAX_SCRIPTS} scripts (-b and -f) in one run, {} given",
                self.scripts.len()
            ));
        }
        let extended = self.mode != QueryMode::Simple;
        for (s, _) in &self.scripts {
            if let Script::File { name, text } = s {
                let p =
                    fleetbench_pgscript::Program::parse(text).map_err(|e| format!("{name}:{e}"))?;
                p.check_mode(extended).map_err(|e| format!("{name}:{e}"))?;
            }
        }
        for (name, _) in &self.defines {
            if !fleetbench_pgscript::value::valid_name(name) {
                return Err(format!("invalid variable name: \"{name}\""));
            }
        }
        if self.max_tries == 0 || self.max_tries > MAX_TRIES {
            return Err(format!(
                "invalid number of maximum tries: {} (1..{MAX_TRIES})",
                self.max_tries
            ));
        }
        if !(10..=100).contains(&self.fillfactor) {
            return Err(format!("invalid fillfactor: {} (10..100)", self.fillfactor));
        }
        if self.partitions > MAX_PARTITIONS {
            return Err(format!(
                "invalid number of partitions: {} (0..{MAX_PARTITIONS})",
                self.partitions
            ));
        }
        if self.first_aid > self.last_aid || self.last_aid > self.accounts() {
            return Err(format!(
                "accounts {}..{} are not within 1..{}",
                self.first_aid,
                self.last_aid,
                self.accounts()
            ));
        }
        Ok(())
    }

    /// Whether every script is a built-in one (run natively, without the interpreter).
    pub fn builtins_only(&self) -> bool {
        self.scripts.iter().all(|(s, _)| s.builtin().is_some())
    }

    /// The script a draw `r` in 0..total weight picks (weights in order).
    pub fn pick(&self, mut r: u64) -> usize {
        for (i, (_, w)) in self.scripts.iter().enumerate() {
            if r < u64::from(*w) {
                return i;
            }
            r -= u64::from(*w);
        }
        self.scripts.len() - 1
    }

    /// The scripts' weights summed.
    pub fn total_weight(&self) -> u64 {
        self.scripts.iter().map(|(_, w)| u64::from(*w)).sum()
    }
}

/// The accounts `agents` agents load at scale `scale`: contiguous shares of 1..=100,000
/// per unit of scale, as even as can be (the first ones a row more); an agent with no
/// share gets (0, 0) and is left out by the caller.
pub fn account_shares(scale: u32, agents: usize) -> Vec<(u64, u64)> {
    let total = u64::from(scale) * ACCOUNTS_PER_SCALE;
    let n = (agents.max(1) as u64).min(total.max(1));
    let (each, extra) = (total / n, total % n);
    let mut out = Vec::with_capacity(n as usize);
    let mut next = 1;
    for i in 0..n {
        let len = each + u64::from(i < extra);
        out.push((next, next + len - 1));
        next += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_are_shared_in_contiguous_even_ranges() {
        assert_eq!(account_shares(1, 1), vec![(1, 100_000)]);
        assert_eq!(account_shares(2, 2), vec![(1, 100_000), (100_001, 200_000)]);
        assert_eq!(
            account_shares(1, 3),
            vec![(1, 33_334), (33_335, 66_667), (66_668, 100_000)]
        );
        let s = account_shares(7, 4);
        assert_eq!(s.first().unwrap().0, 1);
        assert_eq!(s.last().unwrap().1, 700_000);
        for w in s.windows(2) {
            assert_eq!(w[0].1 + 1, w[1].0);
        }
    }

    #[test]
    fn builtins_are_found_by_name_or_unique_prefix() {
        assert_eq!(Builtin::find("tpcb-like"), Ok(Builtin::TpcbLike));
        assert_eq!(Builtin::find("select"), Ok(Builtin::SelectOnly));
        assert_eq!(Builtin::find("si"), Ok(Builtin::SimpleUpdate));
        assert!(Builtin::find("s").unwrap_err().contains("ambiguous"));
        assert!(
            Builtin::find("nope")
                .unwrap_err()
                .contains("no builtin script")
        );
    }

    #[test]
    fn init_steps_are_read_letter_by_letter() {
        assert_eq!(
            Step::parse_letters("dtgvp").unwrap(),
            vec![
                Step::Drop,
                Step::Create,
                Step::Generate,
                Step::Vacuum,
                Step::PrimaryKeys
            ]
        );
        assert_eq!(Step::parse_letters("d t").unwrap().len(), 2);
        assert!(Step::parse_letters("dx").unwrap_err().contains("\"x\""));
        assert!(Step::parse_letters("gG").is_err());
        for s in Step::ALL {
            assert_eq!(Step::from_name(s.name()), Some(s));
        }
    }

    #[test]
    fn weights_pick_scripts_in_order() {
        let c = PgbenchConfig {
            scripts: vec![
                (Script::Builtin(Builtin::SelectOnly), 2),
                (Script::Builtin(Builtin::SimpleUpdate), 1),
            ],
            ..PgbenchConfig::default()
        };
        assert_eq!(c.total_weight(), 3);
        assert_eq!(c.pick(0), 0);
        assert_eq!(c.pick(1), 0);
        assert_eq!(c.pick(2), 1);
    }

    #[test]
    fn validation_names_the_bad_value() {
        let ok = PgbenchConfig::default();
        assert_eq!(ok.validate(), Ok(()));
        let bad = PgbenchConfig {
            fillfactor: 5,
            ..ok.clone()
        };
        assert!(bad.validate().unwrap_err().contains("fillfactor"));
        let mysql = PgbenchConfig {
            target: Target::default(),
            ..ok
        };
        assert!(mysql.validate().is_err());
    }

    #[test]
    fn script_files_are_checked_with_their_name_and_place() {
        let file = |text: &str| PgbenchConfig {
            scripts: vec![(
                Script::File {
                    name: "my.sql".into(),
                    text: text.into(),
                },
                1,
            )],
            ..PgbenchConfig::default()
        };
        assert_eq!(file("SELECT 1;").validate(), Ok(()));
        let e = file("SELECT 1;\\set x (1").validate().unwrap_err();
        assert!(e.starts_with("my.sql:1:"), "{e}");
        let piped = PgbenchConfig {
            mode: QueryMode::Simple,
            ..file("\\startpipeline\nSELECT 1;\n\\endpipeline\n")
        };
        assert!(piped.validate().unwrap_err().contains("extended"));
        let six = PgbenchConfig {
            scripts: vec![(Script::Builtin(Builtin::SelectOnly), 1); 6],
            ..PgbenchConfig::default()
        };
        assert!(six.validate().unwrap_err().contains("at most 5"));
        assert_eq!(
            Script::Builtin(Builtin::TpcbLike).title(),
            "<builtin: TPC-B (sort of)>"
        );
        let text = Script::Builtin(Builtin::SelectOnly).text();
        assert_eq!(
            fleetbench_pgscript::Program::parse(&text)
                .unwrap()
                .commands
                .len(),
            2
        );
    }
}
