//! The five TPC-C transactions (clause 2) as one terminal runs them: the deck of types,
//! the input data of each, and its statements over one lean connection. Values go into
//! the statement text (as tpcc-mysql's do on the wire through the text protocol's
//! literals); every string the terminal sends is generated here or read back from the
//! server, and quoted.
//!
//! The terminal is generic over the driver: the lean MySQL client, or the lean PostgreSQL
//! client for a `pgsql` target. The statements are the same text on both (PostgreSQL takes
//! tpcc-mysql's NOW(), LIMIT and FOR UPDATE as they are); only string literals are quoted
//! each database's way, and each database's deadlock codes are retried.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::r#gen::{NuRandC, last_name, nurand};
use crate::rand::Rng;
use crate::sql::Sockets;
use crate::sql::dialect::Dialect;
use crate::sql::{Client, ErrorClass};
use crate::sql::{Reply, SqlError};
use crate::stats::TxnEnd;
use crate::workloads::{Step, ThreadWorkload, WorkerLoop};
use fleetbench_model::counters::{DbCounters, IoCounters};
use fleetbench_model::sqlstate;
use fleetbench_model::workloads::tpcc::{TXN_NAMES, TpccConfig};

/// MySQL's errors after which a transaction is rolled back and tried again, as tpcc-mysql
/// does: deadlock, lock-wait timeout.
const RETRIED: [u32; 2] = [1213, 1205];
/// PostgreSQL's counterparts, as SQLSTATEs: deadlock_detected, serialization_failure (a
/// server whose default isolation is REPEATABLE READ or SERIALIZABLE) and
/// lock_not_available (`lock_timeout`, as MySQL's lock-wait timeout).
const RETRIED_PG: [&str; 3] = ["40P01", "40001", "55P03"];

/// Whether a server error with `code` rolls the transaction (or a load statement) back to
/// be tried again: MySQL's [`RETRIED`] codes, PostgreSQL's [`RETRIED_PG`] SQLSTATEs.
pub fn retried(code: u32) -> bool {
    if sqlstate::is_sqlstate(code) {
        return RETRIED_PG.contains(&sqlstate::state(code).as_str());
    }
    RETRIED.contains(&code)
}
/// Attempts before a transaction counts as failed.
const MAX_ATTEMPTS: u32 = 10;

/// New-Order, Payment, Order-Status, Delivery, Stock-Level (indexes into TXN_NAMES).
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;

/// tpcc-mysql's deck: 10 New-Order, 10 Payment, one of each other type, shuffled.
pub const DECK: [usize; 23] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4,
];

/// The specification's keying times and mean think times, seconds (clause 5.2.5).
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// A shuffled deck dealt one card per transaction, reshuffled when used up.
#[derive(Debug, Clone)]
pub struct Deck {
    cards: [usize; 23],
    next: usize,
}

impl Deck {
    pub fn new(rng: &mut Rng) -> Deck {
        let mut d = Deck {
            cards: DECK,
            next: DECK.len(),
        };
        d.deal(rng);
        d.next = 0;
        d
    }

    fn deal(&mut self, rng: &mut Rng) {
        // Fisher-Yates.
        for i in (1..self.cards.len()).rev() {
            let j = rng.uniform(0, i as u64) as usize;
            self.cards.swap(i, j);
        }
    }

    pub fn draw(&mut self, rng: &mut Rng) -> usize {
        if self.next == self.cards.len() {
            self.deal(rng);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// The run: every terminal's options, the run's NURand constants and the sockets an
/// abort shuts.
pub struct Tpcc {
    cfg: Arc<TpccConfig>,
    seed: u64,
    /// Index of this agent's first terminal in the whole run (seeds).
    first_thread: u64,
    /// The run's C values (clause 2.1.6): one per run, the same on every terminal.
    c: NuRandC,
    sockets: Arc<Sockets>,
}

impl Tpcc {
    pub fn new(cfg: Arc<TpccConfig>, seed: u64, first_thread: u64) -> Tpcc {
        let load = NuRandC {
            c_last: u64::from(cfg.c_last_load),
            c_id: 0,
            ol_i_id: 0,
        };
        let c = NuRandC::run(&load, &mut Rng::new(seed ^ 0x7c0f_fee5));
        Tpcc {
            cfg,
            seed,
            first_thread,
            c,
            sockets: Arc::new(Sockets::default()),
        }
    }
}

impl Tpcc {
    fn terminal<C: Client>(&self, mut rng: Rng) -> Terminal<C> {
        Terminal {
            cfg: self.cfg.clone(),
            sockets: self.sockets.clone(),
            conn: None,
            deck: Deck::new(&mut rng),
            rng,
            c: self.c,
            sql: String::with_capacity(1024),
            db: DbCounters::default(),
            dialect: Dialect::of(self.cfg.target.driver),
        }
    }
}

impl ThreadWorkload for Tpcc {
    fn worker(&self, thread: u32) -> Box<dyn WorkerLoop + Send> {
        let seed =
            self.seed ^ (self.first_thread + u64::from(thread)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let rng = Rng::new(seed);
        // The lean client of the target's database: TPC-C runs over the driver interface.
        crate::with_lean_client!(self.cfg.target.driver, C => Box::new(self.terminal::<C>(rng)))
    }

    fn sockets(&self) -> Option<Arc<Sockets>> {
        Some(self.sockets.clone())
    }
}

/// One terminal: a connection (opened with its first transaction) and its generators.
struct Terminal<C: Client> {
    cfg: Arc<TpccConfig>,
    sockets: Arc<Sockets>,
    conn: Option<C>,
    rng: Rng,
    deck: Deck,
    c: NuRandC,
    sql: String,
    db: DbCounters,
    /// How string literals are quoted.
    dialect: Dialect,
}

/// Why an attempt did not commit.
enum Abort {
    /// The server's error; retried when its code is in RETRIED.
    Db(SqlError),
    /// The run is stopping.
    Stopped,
}

impl From<SqlError> for Abort {
    fn from(e: SqlError) -> Self {
        Abort::Db(e)
    }
}

/// The attempt's outcome when it did not fail.
#[derive(PartialEq)]
enum Done {
    Committed,
    RolledBack,
}

impl<C: Client> WorkerLoop for Terminal<C> {
    fn event(&mut self, stop: &AtomicBool, _io: &mut IoCounters) -> Step {
        if self.conn.is_none() {
            match C::connect(&self.cfg.target, &self.sockets) {
                Ok(c) => self.conn = Some(c),
                Err(e) => {
                    return Step::Fatal(format!(
                        "target {}: cannot connect: {e}",
                        self.cfg.target.name
                    ));
                }
            }
        }
        let kind = self.deck.draw(&mut self.rng);
        if self.cfg.options.keying_think && !self.pause(stop, KEYING_S[kind]) {
            return Step::Stopped;
        }
        let input = Input::draw(kind, &self.cfg, &self.c, &mut self.rng);
        let mut end = TxnEnd {
            kind,
            ..TxnEnd::default()
        };
        loop {
            match self.attempt(&input, stop) {
                Ok(done) => {
                    end.rolled_back = done == Done::RolledBack;
                    break;
                }
                Err(Abort::Stopped) => {
                    self.rollback();
                    return Step::Stopped;
                }
                Err(Abort::Db(e)) => {
                    let ErrorClass::Ignorable(code) = e.classify(retried) else {
                        if stop.load(Ordering::Relaxed) {
                            return Step::Stopped;
                        }
                        return Step::Fatal(format!(
                            "target {}: {} transaction failed: {e}",
                            self.cfg.target.name, TXN_NAMES[kind]
                        ));
                    };
                    self.db.count_ignored(code);
                    self.rollback();
                    if end.retried + 1 >= MAX_ATTEMPTS {
                        end.failed = true;
                        break;
                    }
                    end.retried += 1;
                }
            }
        }
        end.db = std::mem::take(&mut self.db);
        if self.cfg.options.keying_think {
            // Think time: exponential with the type's mean, cut at ten means (clause 5.2.5.4).
            let mean = THINK_S[kind];
            let u = self.rng.unit_f64();
            let think = (-(1.0 - u).ln() * mean).min(10.0 * mean);
            // Not in the latency: the transaction ended before it, so it is recorded as the
            // next event's wait. Stopping during it loses nothing.
            let _ = self.pause(stop, think);
        }
        Step::Txn(end)
    }

    fn finish(&mut self, _io: &mut IoCounters) -> Result<(), String> {
        if let Some(c) = self.conn.take() {
            if self.sockets.is_cancelled() {
                drop(c);
            } else {
                c.quit();
            }
        }
        Ok(())
    }
}

/// A transaction's input data (clause 2.x.1), drawn before its first attempt so that a
/// retry repeats the same transaction.
#[derive(Debug, Clone, PartialEq)]
enum Input {
    NewOrder {
        w: u32,
        d: u32,
        c: u32,
        /// (item, supplying warehouse, quantity) per line; an unused item on the last line
        /// of 1 % of them makes the transaction roll back.
        lines: Vec<(u32, u32, u32)>,
    },
    Payment {
        w: u32,
        d: u32,
        c_w: u32,
        c_d: u32,
        customer: Customer,
        /// Cents.
        amount: u32,
    },
    OrderStatus {
        w: u32,
        d: u32,
        customer: Customer,
    },
    Delivery {
        w: u32,
        carrier: u32,
    },
    StockLevel {
        w: u32,
        d: u32,
        threshold: u32,
    },
}

/// A customer chosen by id or by last name (60 % of Payments and Order-Status).
#[derive(Debug, Clone, PartialEq)]
enum Customer {
    Id(u32),
    Last(String),
}

impl Input {
    fn draw(kind: usize, cfg: &TpccConfig, c: &NuRandC, rng: &mut Rng) -> Input {
        let all = u64::from(cfg.options.warehouses);
        let w = if cfg.options.partition {
            rng.uniform(
                u64::from(cfg.first_warehouse),
                u64::from(cfg.last_warehouse),
            )
        } else {
            rng.uniform(1, all)
        } as u32;
        // A warehouse other than `w`, uniformly (remote lines and payments).
        let other = |rng: &mut Rng| -> u32 {
            if all == 1 {
                return w;
            }
            let o = rng.uniform(1, all - 1) as u32;
            if o >= w { o + 1 } else { o }
        };
        let d = rng.uniform(1, 10) as u32;
        let customer = |rng: &mut Rng| {
            if rng.uniform(1, 100) <= 60 {
                let mut name = String::new();
                last_name(nurand(rng, 255, 0, 999, c.c_last), &mut name);
                Customer::Last(name)
            } else {
                Customer::Id(nurand(rng, 1023, 1, 3000, c.c_id) as u32)
            }
        };
        match kind {
            NEW_ORDER => {
                let n = rng.uniform(5, 15) as usize;
                let rollback = rng.uniform(1, 100) == 1;
                let mut lines = Vec::with_capacity(n);
                for i in 0..n {
                    let item = if rollback && i == n - 1 {
                        100_001
                    } else {
                        nurand(rng, 8191, 1, 100_000, c.ol_i_id) as u32
                    };
                    let supply = if rng.uniform(1, 100) == 1 {
                        other(rng)
                    } else {
                        w
                    };
                    lines.push((item, supply, rng.uniform(1, 10) as u32));
                }
                Input::NewOrder {
                    w,
                    d,
                    c: nurand(rng, 1023, 1, 3000, c.c_id) as u32,
                    lines,
                }
            }
            PAYMENT => {
                let (c_w, c_d) = if rng.uniform(1, 100) <= 85 {
                    (w, d)
                } else {
                    (other(rng), rng.uniform(1, 10) as u32)
                };
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    customer: customer(rng),
                    amount: rng.uniform(100, 500_000) as u32,
                }
            }
            ORDER_STATUS => Input::OrderStatus {
                w,
                d,
                customer: customer(rng),
            },
            DELIVERY => Input::Delivery {
                w,
                carrier: rng.uniform(1, 10) as u32,
            },
            _ => Input::StockLevel {
                w,
                d,
                threshold: rng.uniform(10, 20) as u32,
            },
        }
    }
}

/// Cents as a decimal literal.
fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
}

impl<C: Client> Terminal<C> {
    /// Appends `s` to the statement as a string literal of the target's database.
    fn push_quoted(&mut self, s: &str) {
        self.dialect.push_literal(&mut self.sql, s);
    }

    /// Sleeps `secs` in slices, returning false when the run stops meanwhile.
    fn pause(&self, stop: &AtomicBool, secs: f64) -> bool {
        let until = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < until {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            let left = until.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        true
    }

    fn conn(&mut self) -> &mut C {
        self.conn
            .as_mut()
            .expect("connected before the first attempt")
    }

    fn rollback(&mut self) {
        if let Some(c) = self.conn.as_mut() {
            let _ = c.query("ROLLBACK");
            self.db.others += 1;
        }
    }

    /// Runs `self.sql` as a statement that changes rows.
    fn write(&mut self) -> Result<u64, Abort> {
        let sql = std::mem::take(&mut self.sql);
        let r = self.conn().query(&sql);
        self.sql = sql;
        self.db.writes += 1;
        match r? {
            Reply::Ok { affected_rows } => Ok(affected_rows),
            Reply::Rows(_) => Ok(0),
        }
    }

    /// Runs `self.sql` as a query and returns its rows.
    fn read(&mut self) -> Result<Vec<Vec<Option<String>>>, Abort> {
        let sql = std::mem::take(&mut self.sql);
        let r = self.conn().query_rows(&sql);
        self.sql = sql;
        self.db.reads += 1;
        Ok(r?)
    }

    fn other(&mut self, sql: &str) -> Result<(), Abort> {
        self.db.others += 1;
        self.conn().query(sql)?;
        Ok(())
    }

    /// `self.sql` = the formatted statement.
    fn set(&mut self, args: std::fmt::Arguments) {
        self.sql.clear();
        let _ = self.sql.write_fmt(args);
    }

    fn attempt(&mut self, input: &Input, stop: &AtomicBool) -> Result<Done, Abort> {
        if stop.load(Ordering::Relaxed) {
            return Err(Abort::Stopped);
        }
        self.other("BEGIN")?;
        let done = match input {
            Input::NewOrder { w, d, c, lines } => self.new_order(*w, *d, *c, lines)?,
            Input::Payment {
                w,
                d,
                c_w,
                c_d,
                customer,
                amount,
            } => self.payment(*w, *d, *c_w, *c_d, customer, *amount)?,
            Input::OrderStatus { w, d, customer } => self.order_status(*w, *d, customer)?,
            Input::Delivery { w, carrier } => self.delivery(*w, *carrier, stop)?,
            Input::StockLevel { w, d, threshold } => self.stock_level(*w, *d, *threshold)?,
        };
        match done {
            Done::Committed => self.other("COMMIT")?,
            Done::RolledBack => self.other("ROLLBACK")?,
        }
        Ok(done)
    }

    /// Clause 2.4.2.
    fn new_order(
        &mut self,
        w: u32,
        d: u32,
        c: u32,
        lines: &[(u32, u32, u32)],
    ) -> Result<Done, Abort> {
        self.set(format_args!(
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
             WHERE w_id = {w} AND c_w_id = w_id AND c_d_id = {d} AND c_id = {c}"
        ));
        self.read()?;
        self.set(format_args!(
            "SELECT d_next_o_id, d_tax FROM district WHERE d_id = {d} AND d_w_id = {w} FOR UPDATE"
        ));
        let rows = self.read()?;
        let o_id: u64 = field(&rows, 0)?;
        self.set(format_args!(
            "UPDATE district SET d_next_o_id = {} WHERE d_id = {d} AND d_w_id = {w}",
            o_id + 1
        ));
        self.write()?;
        let all_local = u32::from(lines.iter().all(|l| l.1 == w));
        self.set(format_args!(
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             VALUES ({o_id}, {d}, {w}, {c}, NOW(), {}, {all_local})",
            lines.len()
        ));
        self.write()?;
        self.set(format_args!(
            "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES ({o_id}, {d}, {w})"
        ));
        self.write()?;
        for (number, &(item, supply, qty)) in lines.iter().enumerate() {
            self.set(format_args!(
                "SELECT i_price, i_name, i_data FROM item WHERE i_id = {item}"
            ));
            let rows = self.read()?;
            if rows.is_empty() {
                // The unused item (clause 2.4.2.3): the whole order rolls back.
                return Ok(Done::RolledBack);
            }
            let price = cents(&rows, 0)?;
            self.set(format_args!(
                "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock \
                 WHERE s_i_id = {item} AND s_w_id = {supply} FOR UPDATE"
            ));
            let rows = self.read()?;
            let quantity: i64 = field(&rows, 0)?;
            let dist = rows[0].get(2).cloned().flatten().unwrap_or_default();
            let left = if quantity - i64::from(qty) >= 10 {
                quantity - i64::from(qty)
            } else {
                quantity - i64::from(qty) + 91
            };
            self.set(format_args!(
                "UPDATE stock SET s_quantity = {left}, s_ytd = s_ytd + {qty}, \
                 s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + {} \
                 WHERE s_i_id = {item} AND s_w_id = {supply}",
                u32::from(supply != w)
            ));
            self.write()?;
            let amount = price * i64::from(qty);
            self.set(format_args!(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                 ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES \
                 ({o_id}, {d}, {w}, {}, {item}, {supply}, {qty}, {}, ",
                number + 1,
                money(amount)
            ));
            self.push_quoted(&dist);
            self.sql.push(')');
            self.write()?;
        }
        Ok(Done::Committed)
    }

    /// The customer's id: given, or the middle one (rounded up) of those with the last
    /// name, by first name (clause 2.5.2.2).
    fn customer_id(&mut self, w: u32, d: u32, customer: &Customer) -> Result<u32, Abort> {
        match customer {
            Customer::Id(id) => Ok(*id),
            Customer::Last(name) => {
                self.set(format_args!(
                    "SELECT c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = "
                ));
                self.push_quoted(name);
                self.sql.push_str(" ORDER BY c_first");
                let rows = self.read()?;
                if rows.is_empty() {
                    return Err(Abort::Db(SqlError::Protocol(format!(
                        "no customer named {name} in warehouse {w} district {d}"
                    ))));
                }
                let pick = rows.len().div_ceil(2) - 1;
                field(&rows[pick..], 0)
            }
        }
    }

    /// Clause 2.5.2.
    fn payment(
        &mut self,
        w: u32,
        d: u32,
        c_w: u32,
        c_d: u32,
        customer: &Customer,
        amount: u32,
    ) -> Result<Done, Abort> {
        let h = money(i64::from(amount));
        self.set(format_args!(
            "UPDATE warehouse SET w_ytd = w_ytd + {h} WHERE w_id = {w}"
        ));
        self.write()?;
        self.set(format_args!(
            "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = {w}"
        ));
        let rows = self.read()?;
        let w_name = rows
            .first()
            .and_then(|r| r.get(5).cloned().flatten())
            .unwrap_or_default();
        self.set(format_args!(
            "UPDATE district SET d_ytd = d_ytd + {h} WHERE d_w_id = {w} AND d_id = {d}"
        ));
        self.write()?;
        self.set(format_args!(
            "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district \
             WHERE d_w_id = {w} AND d_id = {d}"
        ));
        let rows = self.read()?;
        let d_name = rows
            .first()
            .and_then(|r| r.get(5).cloned().flatten())
            .unwrap_or_default();
        let c = self.customer_id(c_w, c_d, customer)?;
        self.set(format_args!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, \
             c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer \
             WHERE c_w_id = {c_w} AND c_d_id = {c_d} AND c_id = {c} FOR UPDATE"
        ));
        let rows = self.read()?;
        let credit = rows
            .first()
            .and_then(|r| r.get(9).cloned().flatten())
            .unwrap_or_default();
        if credit == "BC" {
            self.set(format_args!(
                "SELECT c_data FROM customer WHERE c_w_id = {c_w} AND c_d_id = {c_d} AND c_id = {c}"
            ));
            let rows = self.read()?;
            let old = rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .unwrap_or_default();
            // The payment's facts in front of the old data, kept to 500 characters.
            let mut data = format!("{c} {c_d} {c_w} {d} {w} {h} | {old}");
            data.truncate(500);
            self.set(format_args!(
                "UPDATE customer SET c_balance = c_balance - {h}, c_ytd_payment = c_ytd_payment + {h}, \
                 c_payment_cnt = c_payment_cnt + 1, c_data = "
            ));
            self.push_quoted(&data);
            let _ = write!(
                self.sql,
                " WHERE c_w_id = {c_w} AND c_d_id = {c_d} AND c_id = {c}"
            );
        } else {
            self.set(format_args!(
                "UPDATE customer SET c_balance = c_balance - {h}, c_ytd_payment = c_ytd_payment + {h}, \
                 c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = {c_w} AND c_d_id = {c_d} AND c_id = {c}"
            ));
        }
        self.write()?;
        let mut h_data = format!("{w_name}    {d_name}");
        h_data.truncate(24);
        self.set(format_args!(
            "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
             VALUES ({c_d}, {c_w}, {c}, {d}, {w}, NOW(), {h}, "
        ));
        self.push_quoted(&h_data);
        self.sql.push(')');
        self.write()?;
        Ok(Done::Committed)
    }

    /// Clause 2.6.2.
    fn order_status(&mut self, w: u32, d: u32, customer: &Customer) -> Result<Done, Abort> {
        let c = self.customer_id(w, d, customer)?;
        self.set(format_args!(
            "SELECT c_balance, c_first, c_middle, c_last FROM customer \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"
        ));
        self.read()?;
        self.set(format_args!(
            "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} \
             AND o_c_id = {c} ORDER BY o_id DESC LIMIT 1"
        ));
        let rows = self.read()?;
        if let Some(o_id) = rows.first().and_then(|r| r.first().cloned().flatten()) {
            self.set(format_args!(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
                 WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o_id}"
            ));
            self.read()?;
        }
        Ok(Done::Committed)
    }

    /// Clause 2.7.4: the oldest undelivered order of each district, in one transaction.
    fn delivery(&mut self, w: u32, carrier: u32, stop: &AtomicBool) -> Result<Done, Abort> {
        for d in 1..=10u32 {
            if stop.load(Ordering::Relaxed) {
                return Err(Abort::Stopped);
            }
            self.set(format_args!(
                "SELECT no_o_id FROM new_orders WHERE no_d_id = {d} AND no_w_id = {w} \
                 ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE"
            ));
            let rows = self.read()?;
            let Some(o_id) = rows.first().and_then(|r| r.first().cloned().flatten()) else {
                // None left in this district: skipped, as the specification allows.
                continue;
            };
            self.set(format_args!(
                "DELETE FROM new_orders WHERE no_o_id = {o_id} AND no_d_id = {d} AND no_w_id = {w}"
            ));
            self.write()?;
            self.set(format_args!(
                "SELECT o_c_id FROM orders WHERE o_id = {o_id} AND o_d_id = {d} AND o_w_id = {w}"
            ));
            let rows = self.read()?;
            let c: u64 = field(&rows, 0)?;
            self.set(format_args!(
                "UPDATE orders SET o_carrier_id = {carrier} WHERE o_id = {o_id} AND o_d_id = {d} AND o_w_id = {w}"
            ));
            self.write()?;
            self.set(format_args!(
                "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_o_id = {o_id} \
                 AND ol_d_id = {d} AND ol_w_id = {w}"
            ));
            self.write()?;
            self.set(format_args!(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_o_id = {o_id} AND ol_d_id = {d} AND ol_w_id = {w}"
            ));
            let rows = self.read()?;
            let total = money(cents(&rows, 0).unwrap_or(0));
            self.set(format_args!(
                "UPDATE customer SET c_balance = c_balance + {total}, c_delivery_cnt = c_delivery_cnt + 1 \
                 WHERE c_id = {c} AND c_d_id = {d} AND c_w_id = {w}"
            ));
            self.write()?;
        }
        Ok(Done::Committed)
    }

    /// Clause 2.8.2.
    fn stock_level(&mut self, w: u32, d: u32, threshold: u32) -> Result<Done, Abort> {
        self.set(format_args!(
            "SELECT d_next_o_id FROM district WHERE d_w_id = {w} AND d_id = {d}"
        ));
        let rows = self.read()?;
        let next: u64 = field(&rows, 0)?;
        self.set(format_args!(
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = {w} AND ol_d_id = {d} \
             AND ol_o_id < {next} AND ol_o_id >= {} AND s_w_id = {w} AND s_i_id = ol_i_id \
             AND s_quantity < {threshold}",
            next.saturating_sub(20)
        ));
        self.read()?;
        Ok(Done::Committed)
    }
}

/// Column `col` of the first row, parsed; a missing row is the server's data not being
/// what the load made (a protocol-level surprise, not a retried error).
fn field<T: std::str::FromStr>(rows: &[Vec<Option<String>>], col: usize) -> Result<T, Abort> {
    rows.first()
        .and_then(|r| r.get(col).cloned().flatten())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Abort::Db(SqlError::Protocol("a row the load made is missing".into())))
}

/// A decimal column of the first row in cents.
fn cents(rows: &[Vec<Option<String>>], col: usize) -> Result<i64, Abort> {
    let v: String = field(rows, col)?;
    parse_cents(&v).ok_or_else(|| Abort::Db(SqlError::Protocol(format!("bad amount '{v}'"))))
}

/// "12.34" → 1234, "-10.00" → -1000, "7" → 700.
fn parse_cents(v: &str) -> Option<i64> {
    let (neg, v) = v.strip_prefix('-').map_or((false, v), |r| (true, r));
    let (units, frac) = v.split_once('.').unwrap_or((v, "0"));
    let units: i64 = units.parse().ok()?;
    let frac = format!("{frac:0<2}");
    let frac: i64 = frac.get(..2)?.parse().ok()?;
    let c = units * 100 + frac;
    Some(if neg { -c } else { c })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_deals_ten_ten_one_one_one_per_23() {
        let mut rng = Rng::new(7);
        let mut deck = Deck::new(&mut rng);
        for _ in 0..5 {
            let mut n = [0; 5];
            for _ in 0..23 {
                n[deck.draw(&mut rng)] += 1;
            }
            assert_eq!(n, [10, 10, 1, 1, 1]);
        }
    }

    #[test]
    fn money_and_cents_round_trip() {
        assert_eq!(money(1234), "12.34");
        assert_eq!(money(-1000), "-10.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(parse_cents("12.34"), Some(1234));
        assert_eq!(parse_cents("-10.00"), Some(-1000));
        assert_eq!(parse_cents("7"), Some(700));
        assert_eq!(parse_cents("3.5"), Some(350));
        assert_eq!(parse_cents("x"), None);
    }

    #[test]
    fn deadlocks_and_serialization_failures_are_retried_on_both_databases() {
        for code in [1213, 1205] {
            assert!(retried(code), "{code}");
        }
        for state in ["40P01", "40001", "55P03"] {
            assert!(retried(sqlstate::encode(state).unwrap()), "{state}");
        }
        for state in ["23505", "42P01", "08006"] {
            assert!(!retried(sqlstate::encode(state).unwrap()), "{state}");
        }
        assert!(!retried(1062));
        // A SQLSTATE that happens to spell a MySQL code's digits is not that code.
        assert!(!retried(sqlstate::encode("01213").unwrap()));
    }

    #[test]
    fn inputs_follow_the_specification_shares() {
        let cfg = TpccConfig::with_share(10, 1, 10);
        let c = NuRandC {
            c_last: 100,
            c_id: 200,
            ol_i_id: 300,
        };
        let mut rng = Rng::new(3);
        let (mut orders, mut rollbacks, mut lines, mut remote_lines) = (0, 0, 0, 0);
        let (mut pays, mut remote_pays, mut by_name) = (0, 0, 0);
        for _ in 0..20_000 {
            match Input::draw(NEW_ORDER, &cfg, &c, &mut rng) {
                Input::NewOrder { w, lines: l, .. } => {
                    orders += 1;
                    assert!((5..=15).contains(&l.len()));
                    if l.last().unwrap().0 == 100_001 {
                        rollbacks += 1;
                    }
                    lines += l.len();
                    remote_lines += l.iter().filter(|x| x.1 != w).count();
                    assert!(
                        l.iter()
                            .all(|x| (1..=10).contains(&x.1) && (1..=10).contains(&x.2))
                    );
                }
                other => panic!("{other:?}"),
            }
            match Input::draw(PAYMENT, &cfg, &c, &mut rng) {
                Input::Payment {
                    w,
                    c_w,
                    customer,
                    amount,
                    ..
                } => {
                    pays += 1;
                    remote_pays += usize::from(c_w != w);
                    by_name += usize::from(matches!(customer, Customer::Last(_)));
                    assert!((100..=500_000).contains(&amount));
                }
                other => panic!("{other:?}"),
            }
        }
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b as f64;
        assert!((0.7..1.3).contains(&pct(rollbacks, orders)), "{rollbacks}");
        assert!(
            (0.8..1.2).contains(&pct(remote_lines, lines)),
            "{remote_lines}/{lines}"
        );
        assert!((14.0..16.0).contains(&pct(remote_pays, pays)));
        assert!((59.0..61.0).contains(&pct(by_name, pays)));
    }

    #[test]
    fn partition_keeps_home_warehouses_in_the_share_and_remote_ones_anywhere() {
        let mut cfg = TpccConfig::with_share(8, 3, 4);
        cfg.options.partition = true;
        let c = NuRandC {
            c_last: 1,
            c_id: 2,
            ol_i_id: 3,
        };
        let mut rng = Rng::new(11);
        let mut remote_seen = std::collections::BTreeSet::new();
        for _ in 0..5_000 {
            if let Input::Payment { w, c_w, .. } = Input::draw(PAYMENT, &cfg, &c, &mut rng) {
                assert!((3..=4).contains(&w));
                remote_seen.insert(c_w);
            }
        }
        assert_eq!(remote_seen.len(), 8, "{remote_seen:?}");
    }
}
