//! TPC-C's initial data (clause 4.3.3.1) as multi-row INSERT statements of bounded size.
//!
//! The data is cut into [`Part`]s (the items, a warehouse row, its districts, its stock, and
//! per district its customers, history, orders, new orders and order lines). Every row draws
//! its random values from a generator seeded by (seed, stream, warehouse, district, id), so
//! any part or sub-range of items can be generated alone, in any order or on any connection,
//! and still gives exactly the rows the whole warehouse would: loaders can split the work as
//! they like and tests can check a district without generating 100 MB. The number of lines of
//! each order has its own stream, so [`order_line_rows`] counts order lines exactly without
//! generating them.
//!
//! Values are written straight into the statement text (letters, digits, numbers, NULL and
//! the quoted `now`), so generation allocates per statement, not per row. One thread generates
//! about 600 MB/s of statements in a release build (a warehouse, 76 MB, in 0.13 s) and about
//! 65 MB/s in a debug build.

use super::r#gen::{self as random, NuRandC};
use super::schema;
use crate::rand::Rng;

/// Districts per warehouse.
pub const DISTRICTS: u32 = 10;
/// Customers per district.
pub const CUSTOMERS: u32 = 3000;
/// Orders per district (one per customer).
pub const ORDERS: u32 = 3000;
/// The first undelivered order of each district: orders from here on are in new_orders.
pub const FIRST_NEW_ORDER: u32 = 2101;
/// Items, and stock rows per warehouse.
pub const ITEMS: u32 = 100_000;

/// One INSERT statement of `rows` rows into `table`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub table: &'static str,
    pub rows: u64,
    pub sql: String,
}

/// A piece of the initial data that can be generated on its own. Item and stock ranges are
/// inclusive item ids within 1..=[`ITEMS`] (row streams are keyed by ids below 2^20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Items { first: u32, last: u32 },
    Warehouse,
    Districts,
    Stock { first: u32, last: u32 },
    Customers { district: u32 },
    History { district: u32 },
    Orders { district: u32 },
    NewOrders { district: u32 },
    OrderLines { district: u32 },
}

impl Part {
    /// The table this part fills.
    pub fn table(&self) -> &'static str {
        match self {
            Part::Items { .. } => "item",
            Part::Warehouse => "warehouse",
            Part::Districts => "district",
            Part::Stock { .. } => "stock",
            Part::Customers { .. } => "customer",
            Part::History { .. } => "history",
            Part::Orders { .. } => "orders",
            Part::NewOrders { .. } => "new_orders",
            Part::OrderLines { .. } => "order_line",
        }
    }

    /// The exact number of rows this part generates for warehouse `w` and `seed` (only order
    /// lines depend on them).
    pub fn rows(&self, w: u32, seed: u64) -> u64 {
        let span = |first: u32, last: u32| {
            if last >= first {
                u64::from(last - first) + 1
            } else {
                0
            }
        };
        match *self {
            Part::Items { first, last } | Part::Stock { first, last } => span(first, last),
            Part::Warehouse => 1,
            Part::Districts => u64::from(DISTRICTS),
            Part::Customers { .. } | Part::History { .. } | Part::Orders { .. } => {
                u64::from(CUSTOMERS)
            }
            Part::NewOrders { .. } => u64::from(ORDERS - FIRST_NEW_ORDER + 1),
            Part::OrderLines { district } => (1..=ORDERS)
                .map(|o| u64::from(line_count(seed, w, district, o)))
                .sum(),
        }
    }
}

/// The parts of one warehouse, in the order [`warehouse_batches`] generates them.
pub fn warehouse_parts() -> Vec<Part> {
    let mut parts = vec![
        Part::Warehouse,
        Part::Districts,
        Part::Stock {
            first: 1,
            last: ITEMS,
        },
    ];
    for district in 1..=DISTRICTS {
        parts.extend([
            Part::Customers { district },
            Part::History { district },
            Part::Orders { district },
            Part::NewOrders { district },
            Part::OrderLines { district },
        ]);
    }
    parts
}

/// Rows per table that [`warehouse_batches`] generates where the count is fixed: `None` for
/// order_line (see [`order_line_rows`]) and for names that are not TPC-C tables; item has 0
/// (items are loaded once, by [`item_batches`]).
pub fn warehouse_rows(table: &str) -> Option<u64> {
    match table {
        "order_line" => None,
        "item" => Some(0),
        t => schema::table(t).map(|_| schema::rows(t, 1)),
    }
}

/// The exact number of order lines [`warehouse_batches`] generates for `w` and `seed`: the sum
/// of o_ol_cnt over its 30,000 orders.
pub fn order_line_rows(w: u32, seed: u64) -> u64 {
    (1..=DISTRICTS)
        .map(|district| Part::OrderLines { district }.rows(w, seed))
        .sum()
}

/// The 100,000 items, in statements of at most about `max_bytes` bytes.
pub fn item_batches(seed: u64, max_bytes: usize) -> Batches {
    let items = Part::Items {
        first: 1,
        last: ITEMS,
    };
    let unused = NuRandC {
        c_last: 0,
        c_id: 0,
        ol_i_id: 0,
    };
    part_batches(&[items], 0, seed, &unused, "", max_bytes)
}

/// Everything of warehouse `w` but the items ([`warehouse_parts`]). `c` holds the load's NURand
/// constants (for customer last names) and `now` the datetime literal, e.g.
/// `2026-12-02 13:45:00`, for c_since, h_date, o_entry_d and ol_delivery_d. The same arguments
/// give the same statements.
pub fn warehouse_batches(w: u32, seed: u64, c: &NuRandC, now: &str, max_bytes: usize) -> Batches {
    part_batches(&warehouse_parts(), w, seed, c, now, max_bytes)
}

/// The statements of `parts` of warehouse `w`, in order. No statement exceeds `max_bytes`
/// unless a single row does; each part ends its last statement, so a statement holds one
/// table's rows.
pub fn part_batches(
    parts: &[Part],
    w: u32,
    seed: u64,
    c: &NuRandC,
    now: &str,
    max_bytes: usize,
) -> Batches {
    Batches {
        parts: parts.to_owned(),
        next_part: 0,
        ctx: Ctx {
            w,
            seed,
            c: *c,
            now: sql_literal(now),
        },
        max_bytes,
        rows_of: None,
        table: "",
        prefix: String::new(),
        sql: String::new(),
        rows: 0,
    }
}

/// `s` as a single-quoted MySQL literal. `now` is the only value from outside; quoting it
/// keeps an odd value from breaking the statements.
fn sql_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            ch => out.push(ch),
        }
    }
    out.push('\'');
    out
}

/// The independent random streams; each row of each stream has its own generator.
#[derive(Clone, Copy)]
enum Stream {
    Item = 1,
    Warehouse,
    District,
    Stock,
    Customer,
    History,
    Permutation,
    Order,
    OrderLines,
    LineCount,
}

/// The generator of one row (or one order's lines) of `stream`.
fn stream(seed: u64, stream: Stream, w: u32, d: u32, id: u32) -> Rng {
    debug_assert!(d < 1 << 8 && id < 1 << 20);
    // Injective in (w, d, id, stream) for id < 2^20, d < 2^8 and fewer than 16 streams.
    let key = (u64::from(w) << 32) | (u64::from(d) << 24) | (u64::from(id) << 4) | stream as u64;
    Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(31) ^ key)
}

/// o_ol_cnt of order `o` of district `d`: 5..=15.
fn line_count(seed: u64, w: u32, d: u32, o: u32) -> u32 {
    stream(seed, Stream::LineCount, w, d, o).uniform(5, 15) as u32
}

/// o_c_id of each order of district `d`: a random permutation of the customer ids.
fn customer_permutation(seed: u64, w: u32, d: u32) -> Vec<u32> {
    let mut rng = stream(seed, Stream::Permutation, w, d, 0);
    let mut ids: Vec<u32> = (1..=CUSTOMERS).collect();
    for i in (1..ids.len()).rev() {
        let j = rng.uniform(0, i as u64) as usize;
        ids.swap(i, j);
    }
    ids
}

/// What every row of a warehouse shares.
struct Ctx {
    w: u32,
    seed: u64,
    c: NuRandC,
    /// Already quoted.
    now: String,
}

/// Iterator over the statements of some parts; see [`part_batches`].
pub struct Batches {
    parts: Vec<Part>,
    next_part: usize,
    ctx: Ctx,
    max_bytes: usize,
    /// The rows of the part being generated.
    rows_of: Option<PartRows>,
    table: &'static str,
    /// `INSERT INTO t (columns) VALUES ` of the current part.
    prefix: String,
    sql: String,
    rows: u64,
}

impl Batches {
    fn take_batch(&mut self, next_sql: String, next_rows: u64) -> Batch {
        let sql = std::mem::replace(&mut self.sql, next_sql);
        let rows = std::mem::replace(&mut self.rows, next_rows);
        Batch {
            table: self.table,
            rows,
            sql,
        }
    }

    fn new_sql(&self) -> String {
        // Room for a statement and the row that overflows it, capped so that a huge max_bytes
        // does not reserve that much up front.
        String::with_capacity(self.max_bytes.saturating_add(1024).min(1 << 26))
    }
}

impl Iterator for Batches {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        loop {
            let Some(rows_of) = self.rows_of.as_mut() else {
                let part = *self.parts.get(self.next_part)?;
                self.next_part += 1;
                self.table = part.table();
                self.prefix = format!(
                    "INSERT INTO {} ({}) VALUES ",
                    self.table,
                    schema::column_list(self.table)
                );
                self.rows_of = Some(PartRows::new(part, &self.ctx));
                if self.sql.capacity() == 0 {
                    self.sql = self.new_sql();
                }
                continue;
            };
            let start = self.sql.len();
            if self.rows == 0 {
                self.sql.push_str(&self.prefix);
            } else {
                self.sql.push(',');
            }
            if !rows_of.write(&self.ctx, &mut self.sql) {
                self.sql.truncate(start);
                self.rows_of = None;
                if self.rows > 0 {
                    let next = self.new_sql();
                    return Some(self.take_batch(next, 0));
                }
                continue;
            }
            if self.rows > 0 && self.sql.len() > self.max_bytes {
                // The row just written starts the next statement, so this one stays within
                // max_bytes (a server's max_allowed_packet, say).
                let mut next = self.new_sql();
                next.push_str(&self.prefix);
                next.push_str(&self.sql[start + 1..]);
                self.sql.truncate(start);
                return Some(self.take_batch(next, 1));
            }
            self.rows += 1;
        }
    }
}

/// The row cursor of one part.
struct PartRows {
    part: Part,
    /// Next id (item, customer, order) and the last one.
    next: u32,
    last: u32,
    /// Orders: o_c_id by o_id - 1.
    customers: Vec<u32>,
    /// Order lines: the current order's generator, its line count and the next line number.
    lines_rng: Rng,
    lines: u32,
    line: u32,
}

impl PartRows {
    fn new(part: Part, ctx: &Ctx) -> PartRows {
        let (next, last) = match part {
            Part::Items { first, last } | Part::Stock { first, last } => (first, last),
            Part::Warehouse => (1, 1),
            Part::Districts => (1, DISTRICTS),
            Part::Customers { .. } | Part::History { .. } => (1, CUSTOMERS),
            Part::Orders { .. } | Part::OrderLines { .. } => (1, ORDERS),
            Part::NewOrders { .. } => (FIRST_NEW_ORDER, ORDERS),
        };
        let customers = match part {
            Part::Orders { district } => customer_permutation(ctx.seed, ctx.w, district),
            _ => Vec::new(),
        };
        PartRows {
            part,
            next,
            last,
            customers,
            lines_rng: Rng::new(0),
            lines: 0,
            line: 0,
        }
    }

    /// Writes the next row, `(v1,v2,...)`, or returns false when the part is done.
    fn write(&mut self, ctx: &Ctx, out: &mut String) -> bool {
        if let Part::OrderLines { district } = self.part {
            return self.write_order_line(ctx, district, out);
        }
        if self.next > self.last {
            return false;
        }
        let id = self.next;
        self.next += 1;
        let (w, seed) = (ctx.w, ctx.seed);
        out.push('(');
        match self.part {
            Part::Items { .. } => write_item(&mut stream(seed, Stream::Item, 0, 0, id), id, out),
            Part::Warehouse => {
                write_warehouse(&mut stream(seed, Stream::Warehouse, w, 0, 0), w, out)
            }
            Part::Districts => {
                write_district(&mut stream(seed, Stream::District, w, id, 0), w, id, out)
            }
            Part::Stock { .. } => {
                write_stock(&mut stream(seed, Stream::Stock, w, 0, id), w, id, out)
            }
            Part::Customers { district } => {
                let mut rng = stream(seed, Stream::Customer, w, district, id);
                write_customer(&mut rng, ctx, district, id, out);
            }
            Part::History { district } => {
                let mut rng = stream(seed, Stream::History, w, district, id);
                write_history(&mut rng, ctx, district, id, out);
            }
            Part::Orders { district } => {
                let mut rng = stream(seed, Stream::Order, w, district, id);
                let o_c_id = self.customers[(id - 1) as usize];
                let ol_cnt = line_count(seed, w, district, id);
                write_order(&mut rng, ctx, district, id, o_c_id, ol_cnt, out);
            }
            Part::NewOrders { district } => {
                push_ids(out, &[id, district, w]);
            }
            Part::OrderLines { .. } => unreachable!("handled above"),
        }
        out.push(')');
        true
    }

    fn write_order_line(&mut self, ctx: &Ctx, district: u32, out: &mut String) -> bool {
        while self.line >= self.lines {
            if self.next > self.last {
                return false;
            }
            let o = self.next;
            self.next += 1;
            self.lines = line_count(ctx.seed, ctx.w, district, o);
            self.lines_rng = stream(ctx.seed, Stream::OrderLines, ctx.w, district, o);
            self.line = 0;
        }
        self.line += 1;
        let o = self.next - 1;
        let rng = &mut self.lines_rng;
        out.push('(');
        let i_id = rng.uniform(1, u64::from(ITEMS)) as u32;
        push_ids(out, &[o, district, ctx.w, self.line, i_id, ctx.w]);
        out.push(',');
        // Delivered orders (o_id < 2101) have a date and no amount; the others the reverse.
        if o < FIRST_NEW_ORDER {
            out.push_str(&ctx.now);
            out.push_str(",5,0.00,");
        } else {
            out.push_str("NULL,5,");
            push_cents(out, rng.uniform(1, 999_999));
            out.push(',');
        }
        quoted(out, |s| random::astring(rng, 24, 24, s));
        out.push(')');
        true
    }
}

fn write_item(rng: &mut Rng, i_id: u32, out: &mut String) {
    push_ids(out, &[i_id, rng.uniform(1, 10_000) as u32]);
    out.push(',');
    quoted(out, |s| random::astring(rng, 14, 24, s));
    out.push(',');
    push_cents(out, rng.uniform(100, 10_000));
    out.push(',');
    quoted(out, |s| random::data_original(rng, 26, 50, s));
}

fn write_stock(rng: &mut Rng, w: u32, i_id: u32, out: &mut String) {
    push_ids(out, &[i_id, w, rng.uniform(10, 100) as u32]);
    for _ in 1..=10 {
        out.push(',');
        quoted(out, |s| random::astring(rng, 24, 24, s));
    }
    out.push_str(",0,0,0,");
    quoted(out, |s| random::data_original(rng, 26, 50, s));
}

/// `,'street_1','street_2','city','state','zip'`.
fn write_address(rng: &mut Rng, out: &mut String) {
    for (min, max) in [(10, 20), (10, 20), (10, 20), (2, 2)] {
        out.push(',');
        quoted(out, |s| random::astring(rng, min, max, s));
    }
    out.push(',');
    quoted(out, |s| random::zip(rng, s));
}

/// What a warehouse and a district row share after their ids: name, address and tax.
fn write_name_address_tax(rng: &mut Rng, out: &mut String) {
    out.push(',');
    quoted(out, |s| random::astring(rng, 6, 10, s));
    write_address(rng, out);
    out.push(',');
    // w_tax and d_tax 0.0000..0.2000 in the spec; decimal(4,2) keeps two decimals.
    push_cents(out, rng.uniform(0, 20));
}

fn write_warehouse(rng: &mut Rng, w: u32, out: &mut String) {
    push_u64(out, u64::from(w));
    write_name_address_tax(rng, out);
    out.push_str(",300000.00");
}

fn write_district(rng: &mut Rng, w: u32, d: u32, out: &mut String) {
    push_ids(out, &[d, w]);
    write_name_address_tax(rng, out);
    // Ten districts of 30,000.00 make the warehouse's 300,000.00 (consistency condition 1).
    out.push_str(",30000.00,");
    push_u64(out, u64::from(ORDERS + 1));
}

fn write_customer(rng: &mut Rng, ctx: &Ctx, d: u32, c_id: u32, out: &mut String) {
    push_ids(out, &[c_id, d, ctx.w]);
    out.push(',');
    quoted(out, |s| random::astring(rng, 8, 16, s));
    out.push_str(",'OE',");
    quoted(out, |s| {
        random::customer_last(rng, u64::from(c_id), &ctx.c, s)
    });
    write_address(rng, out);
    out.push(',');
    quoted(out, |s| random::nstring(rng, 16, 16, s));
    out.push(',');
    out.push_str(&ctx.now);
    out.push_str(if rng.uniform(1, 10) == 1 {
        ",'BC',50000,"
    } else {
        ",'GC',50000,"
    });
    push_cents(out, rng.uniform(0, 50));
    out.push_str(",-10.00,10.00,1,0,");
    quoted(out, |s| random::astring(rng, 300, 500, s));
}

fn write_history(rng: &mut Rng, ctx: &Ctx, d: u32, c_id: u32, out: &mut String) {
    push_ids(out, &[c_id, d, ctx.w, d, ctx.w]);
    out.push(',');
    out.push_str(&ctx.now);
    out.push_str(",10.00,");
    quoted(out, |s| random::astring(rng, 12, 24, s));
}

fn write_order(
    rng: &mut Rng,
    ctx: &Ctx,
    d: u32,
    o_id: u32,
    o_c_id: u32,
    ol_cnt: u32,
    out: &mut String,
) {
    push_ids(out, &[o_id, d, ctx.w, o_c_id]);
    out.push(',');
    out.push_str(&ctx.now);
    out.push(',');
    if o_id < FIRST_NEW_ORDER {
        push_u64(out, rng.uniform(1, 10));
    } else {
        out.push_str("NULL");
    }
    out.push(',');
    push_u64(out, u64::from(ol_cnt));
    out.push_str(",1");
}

/// Appends `'...'` around what `f` appends (letters and digits, so nothing to escape).
fn quoted(out: &mut String, f: impl FnOnce(&mut String)) {
    out.push('\'');
    f(out);
    out.push('\'');
}

/// Appends the ids separated by commas.
fn push_ids(out: &mut String, ids: &[u32]) {
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_u64(out, u64::from(id));
    }
}

/// Appends `n` in decimal, without going through `fmt`.
fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).expect("ASCII digits"));
}

/// Appends an amount given in cents with two decimals: 1234 is `12.34`.
fn push_cents(out: &mut String, cents: u64) {
    push_u64(out, cents / 100);
    out.push('.');
    let c = (cents % 100) as u8;
    out.push(char::from(b'0' + c / 10));
    out.push(char::from(b'0' + c % 10));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::OnceLock;

    const SEED: u64 = 42;
    const NOW: &str = "2026-12-02 13:45:00";
    const C: NuRandC = NuRandC {
        c_last: 123,
        c_id: 456,
        ol_i_id: 789,
    };

    /// The values of each row of a statement, quotes removed. Values never hold commas or
    /// parentheses, so plain splitting is exact.
    fn values(b: &Batch) -> Vec<Vec<String>> {
        let body = b.sql.split_once(" VALUES (").expect("VALUES").1;
        let body = body.strip_suffix(')').expect("closing paren");
        body.split("),(")
            .map(|row| {
                row.split(',')
                    .map(|v| v.trim_matches('\'').to_owned())
                    .collect()
            })
            .collect()
    }

    fn batches(parts: &[Part], w: u32, max_bytes: usize) -> Vec<Batch> {
        part_batches(parts, w, SEED, &C, NOW, max_bytes).collect()
    }

    fn district_parts(district: u32) -> Vec<Part> {
        warehouse_parts()
            .into_iter()
            .filter(|p| match p {
                Part::Customers { district: d }
                | Part::History { district: d }
                | Part::Orders { district: d }
                | Part::NewOrders { district: d }
                | Part::OrderLines { district: d } => *d == district,
                _ => false,
            })
            .collect()
    }

    /// The warehouse, district and 3,000 stock rows, and district 3: every kind of row.
    fn sample_parts() -> Vec<Part> {
        let mut parts = vec![
            Part::Warehouse,
            Part::Districts,
            Part::Stock {
                first: 1,
                last: 3000,
            },
        ];
        parts.extend(district_parts(3));
        parts
    }

    /// [`sample_parts`] of warehouse 2, generated once for all tests (debug builds are slow).
    fn sample() -> &'static Vec<Batch> {
        static SAMPLE: OnceLock<Vec<Batch>> = OnceLock::new();
        SAMPLE.get_or_init(|| batches(&sample_parts(), 2, 64 * 1024))
    }

    fn rows_of<'a>(all: &'a [Batch], table: &str) -> Vec<(&'a Batch, Vec<String>)> {
        all.iter()
            .filter(|b| b.table == table)
            .flat_map(|b| values(b).into_iter().map(move |r| (b, r)))
            .collect()
    }

    #[test]
    fn warehouse_plan_has_spec_counts() {
        let mut per_table: HashMap<&str, u64> = HashMap::new();
        for part in warehouse_parts() {
            *per_table.entry(part.table()).or_default() += part.rows(1, SEED);
        }
        for table in fleetbench_model::workloads::tpcc::TABLES {
            match warehouse_rows(table) {
                Some(n) => assert_eq!(per_table.get(table).copied().unwrap_or(0), n, "{table}"),
                None => assert_eq!(table, "order_line"),
            }
        }
        assert_eq!(warehouse_rows("warehouse"), Some(1));
        assert_eq!(warehouse_rows("district"), Some(10));
        assert_eq!(warehouse_rows("customer"), Some(30_000));
        assert_eq!(warehouse_rows("history"), Some(30_000));
        assert_eq!(warehouse_rows("orders"), Some(30_000));
        assert_eq!(warehouse_rows("new_orders"), Some(9_000));
        assert_eq!(warehouse_rows("stock"), Some(100_000));
        assert_eq!(warehouse_rows("nope"), None);
        let ol = order_line_rows(1, SEED);
        assert_eq!(per_table["order_line"], ol);
        assert!((150_000..=450_000).contains(&ol));
        // Mean 10 lines per order, standard deviation of the sum about 550.
        assert!((297_000..=303_000).contains(&ol), "{ol}");
        assert_ne!(ol, order_line_rows(2, SEED));
        assert_eq!(ol, order_line_rows(1, SEED));
    }

    #[test]
    fn generated_rows_match_part_counts_and_columns() {
        let all = sample();
        let mut per_table: HashMap<&str, u64> = HashMap::new();
        for b in all {
            let rows = values(b);
            assert_eq!(rows.len() as u64, b.rows, "{}", b.table);
            let cols = schema::table(b.table).unwrap().columns.len();
            assert!(rows.iter().all(|r| r.len() == cols), "{}", b.table);
            let list = schema::column_list(b.table);
            assert!(
                b.sql
                    .starts_with(&format!("INSERT INTO {} ({list}) VALUES (", b.table))
            );
            *per_table.entry(b.table).or_default() += b.rows;
        }
        let mut want: HashMap<&str, u64> = HashMap::new();
        for p in sample_parts() {
            *want.entry(p.table()).or_default() += p.rows(2, SEED);
        }
        assert_eq!(per_table, want);
        assert_eq!(per_table["customer"], 3000);
        assert_eq!(per_table["new_orders"], 900);
        assert_eq!(per_table["stock"], 3000);
        // Order lines: the sum of o_ol_cnt.
        let ol_cnt: u64 = rows_of(all, "orders")
            .iter()
            .map(|(_, r)| r[6].parse::<u64>().unwrap())
            .sum();
        assert_eq!(per_table["order_line"], ol_cnt);
    }

    #[test]
    fn statements_stay_within_max_bytes() {
        let parts = [
            Part::Customers { district: 1 },
            Part::History { district: 1 },
        ];
        for max in [2_000, 10_000, 100_000] {
            let all = batches(&parts, 1, max);
            assert!(all.iter().all(|b| b.sql.len() <= max), "max {max}");
            // Full statements are not far below the limit: the next row did not fit.
            let customers: Vec<&Batch> = all.iter().filter(|b| b.table == "customer").collect();
            let last = customers.len() - 1;
            assert!(customers[..last].iter().all(|b| b.sql.len() > max - 800));
            assert_eq!(all.iter().map(|b| b.rows).sum::<u64>(), 6000);
        }
        // A limit below one row: one row per statement, nothing lost.
        let tiny = batches(&[Part::NewOrders { district: 4 }], 1, 10);
        assert_eq!(tiny.len(), 900);
        assert!(tiny.iter().all(|b| b.rows == 1));
        assert_eq!(
            tiny[0].sql,
            "INSERT INTO new_orders (no_o_id,no_d_id,no_w_id) VALUES (2101,4,1)"
        );
        assert_eq!(
            tiny[899].sql.rsplit_once("VALUES ").unwrap().1,
            "(3000,4,1)"
        );
    }

    #[test]
    fn same_arguments_same_statements() {
        let parts = [
            Part::Customers { district: 2 },
            Part::Stock {
                first: 10,
                last: 400,
            },
        ];
        let a = batches(&parts, 5, 50_000);
        assert_eq!(a, batches(&parts, 5, 50_000));
        assert_ne!(a, batches(&parts, 6, 50_000));
        let other_seed: Vec<Batch> = part_batches(&parts, 5, SEED + 1, &C, NOW, 50_000).collect();
        assert_ne!(a, other_seed);
        // Statement size changes the cut, not the rows.
        let joined = |bs: &[Batch]| bs.iter().flat_map(values).collect::<Vec<_>>();
        assert_eq!(joined(&a), joined(&batches(&parts, 5, 3_000)));
        // A sub-range gives the rows the whole range has.
        let sub = batches(
            &[Part::Stock {
                first: 200,
                last: 210,
            }],
            5,
            50_000,
        );
        let whole = joined(&a);
        let first = whole
            .iter()
            .position(|r| r[0] == "200" && r[1] == "5" && r.len() == 17);
        let first = first.unwrap();
        assert_eq!(joined(&sub), whole[first..first + 11]);
        // Items too.
        let items: Vec<Batch> = item_batches(SEED, 1 << 20).take(2).collect();
        let again: Vec<Batch> = item_batches(SEED, 1 << 20).take(2).collect();
        assert_eq!(items, again);
    }

    #[test]
    fn warehouse_and_district_values() {
        let all = sample();
        let w = rows_of(all, "warehouse");
        assert_eq!(w.len(), 1);
        let w = &w[0].1;
        assert_eq!(w[0], "2");
        assert!((6..=10).contains(&w[1].len()));
        assert_eq!(w[5].len(), 2);
        assert!(w[6].ends_with("11111") && w[6].len() == 9);
        let tax: f64 = w[7].parse().unwrap();
        assert!((0.0..=0.2).contains(&tax) && w[7].len() == 4, "{}", w[7]);
        assert_eq!(w[8], "300000.00");
        let d = rows_of(all, "district");
        let ids: Vec<&str> = d.iter().map(|(_, r)| r[0].as_str()).collect();
        assert_eq!(ids, ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
        for (_, r) in &d {
            assert_eq!(r[1], "2");
            assert_eq!((r[9].as_str(), r[10].as_str()), ("30000.00", "3001"));
        }
        // Different districts get different names.
        assert_ne!(d[0].1[2], d[1].1[2]);
    }

    #[test]
    fn customers_and_history() {
        let all = sample();
        let customers = rows_of(all, "customer");
        assert_eq!(customers.len(), 3000);
        let mut bc = 0;
        for (i, (_, r)) in customers.iter().enumerate() {
            let c_id = i as u64 + 1;
            assert_eq!(r[0], c_id.to_string());
            assert_eq!(
                (r[1].as_str(), r[2].as_str(), r[4].as_str()),
                ("3", "2", "OE")
            );
            if c_id <= 1000 {
                let mut name = String::new();
                random::last_name(c_id - 1, &mut name);
                assert_eq!(r[5], name);
            }
            assert!((8..=16).contains(&r[3].len()));
            assert_eq!(r[11].len(), 16);
            assert_eq!(r[12], NOW);
            assert!(r[13] == "BC" || r[13] == "GC");
            bc += usize::from(r[13] == "BC");
            assert_eq!(r[14], "50000");
            let disc: f64 = r[15].parse().unwrap();
            assert!((0.0..=0.5).contains(&disc));
            assert_eq!(&r[16..20], ["-10.00", "10.00", "1", "0"]);
            assert!((300..=500).contains(&r[20].len()));
        }
        // 10 % of 3,000, standard deviation 16.
        assert!((240..=360).contains(&bc), "{bc} BC customers");
        // Customers above 1,000 get NURand names, so some names repeat.
        let mut names: Vec<&str> = customers[1000..]
            .iter()
            .map(|(_, r)| r[5].as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert!(names.len() < 1900, "{}", names.len());
        let history = rows_of(all, "history");
        assert_eq!(history.len(), 3000);
        for (i, (_, r)) in history.iter().enumerate() {
            assert_eq!(r[0], (i + 1).to_string());
            assert_eq!(&r[1..7], ["3", "2", "3", "2", NOW, "10.00"]);
            assert!((12..=24).contains(&r[7].len()));
        }
    }

    #[test]
    fn orders_new_orders_and_lines() {
        let all = sample();
        let orders = rows_of(all, "orders");
        assert_eq!(orders.len(), 3000);
        let mut c_ids: Vec<u32> = Vec::new();
        let mut lines_of = Vec::new();
        for (i, (_, r)) in orders.iter().enumerate() {
            let o = i as u32 + 1;
            assert_eq!(r[0], o.to_string());
            assert_eq!(
                (r[1].as_str(), r[2].as_str(), r[4].as_str()),
                ("3", "2", NOW)
            );
            c_ids.push(r[3].parse().unwrap());
            if o < FIRST_NEW_ORDER {
                let carrier: u32 = r[5].parse().unwrap();
                assert!((1..=10).contains(&carrier));
            } else {
                assert_eq!(r[5], "NULL");
            }
            let n: u32 = r[6].parse().unwrap();
            assert!((5..=15).contains(&n));
            lines_of.push(n);
            assert_eq!(r[7], "1");
        }
        // o_c_id is a permutation of 1..=3000, and not the identity.
        assert_ne!(c_ids[..10], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        c_ids.sort_unstable();
        assert_eq!(c_ids, (1..=3000).collect::<Vec<u32>>());
        let new: Vec<String> = rows_of(all, "new_orders")
            .into_iter()
            .map(|(_, r)| r.join(","))
            .collect();
        let want: Vec<String> = (2101..=3000).map(|o| format!("{o},3,2")).collect();
        assert_eq!(new, want);
        let lines = rows_of(all, "order_line");
        let mut seen = vec![0u32; 3000];
        let mut amounts = std::collections::HashSet::new();
        for (_, r) in &lines {
            let o: u32 = r[0].parse().unwrap();
            let n: u32 = r[3].parse().unwrap();
            seen[(o - 1) as usize] += 1;
            // Lines of an order are numbered 1, 2, ... in order.
            assert_eq!(n, seen[(o - 1) as usize]);
            assert_eq!(
                (r[1].as_str(), r[2].as_str(), r[5].as_str()),
                ("3", "2", "2")
            );
            let i_id: u32 = r[4].parse().unwrap();
            assert!((1..=ITEMS).contains(&i_id));
            assert_eq!(r[7], "5");
            if o < FIRST_NEW_ORDER {
                assert_eq!((r[6].as_str(), r[8].as_str()), (NOW, "0.00"));
            } else {
                assert_eq!(r[6], "NULL");
                let amount: f64 = r[8].parse().unwrap();
                assert!((0.01..=9999.99).contains(&amount));
                amounts.insert(r[8].clone());
            }
            assert_eq!(r[9].len(), 24);
        }
        assert_eq!(seen, lines_of);
        assert!(amounts.len() > 8000, "amounts vary");
    }

    #[test]
    fn stock_and_items_original_ten_percent() {
        let all = sample();
        let stock = rows_of(all, "stock");
        let mut original = 0;
        for (i, (_, r)) in stock.iter().enumerate() {
            assert_eq!(
                (r[0].as_str(), r[1].as_str()),
                ((i + 1).to_string().as_str(), "2")
            );
            let q: u32 = r[2].parse().unwrap();
            assert!((10..=100).contains(&q));
            assert!(r[3..13].iter().all(|s| s.len() == 24));
            assert_eq!(&r[13..16], ["0", "0", "0"]);
            assert!((26..=50).contains(&r[16].len()));
            original += usize::from(r[16].contains("ORIGINAL"));
        }
        // 10 % of 3,000.
        assert!((240..=360).contains(&original), "{original}");
        let items: Vec<Batch> = part_batches(
            &[Part::Items {
                first: 1,
                last: 3000,
            }],
            0,
            SEED,
            &C,
            "",
            1 << 20,
        )
        .collect();
        let items = rows_of(&items, "item");
        assert_eq!(items.len(), 3000);
        let mut original = 0;
        for (i, (_, r)) in items.iter().enumerate() {
            assert_eq!(r[0], (i + 1).to_string());
            let im: u32 = r[1].parse().unwrap();
            assert!((1..=10_000).contains(&im));
            assert!((14..=24).contains(&r[2].len()));
            let price: f64 = r[3].parse().unwrap();
            assert!((1.0..=100.0).contains(&price) && r[3].split('.').nth(1).unwrap().len() == 2);
            original += usize::from(r[4].contains("ORIGINAL"));
        }
        assert!((240..=360).contains(&original), "{original}");
        // item_batches covers 1..=100,000 (counting rows only).
        let total: u64 = item_batches(SEED, 4 << 20).map(|b| b.rows).sum();
        assert_eq!(total, 100_000);
    }

    #[test]
    fn now_is_quoted_safely() {
        assert_eq!(sql_literal(NOW), "'2026-12-02 13:45:00'");
        assert_eq!(sql_literal("a'b\\c"), "'a''b\\\\c'");
        let b: Vec<Batch> =
            part_batches(&[Part::History { district: 1 }], 1, 1, &C, "x'y", 1 << 20).collect();
        assert!(b[0].sql.contains(",'x''y',10.00,"));
    }

    #[test]
    fn batches_can_move_to_a_loader_thread() {
        fn send<T: Send + 'static>(_: &T) {}
        let now = String::from(NOW);
        let it = warehouse_batches(1, SEED, &C, &now, 1 << 20);
        drop(now);
        send(&it);
    }

    #[test]
    fn number_formatting() {
        let mut s = String::new();
        push_u64(&mut s, 0);
        s.push(' ');
        push_u64(&mut s, u64::MAX);
        s.push(' ');
        push_cents(&mut s, 5);
        s.push(' ');
        push_cents(&mut s, 999_999);
        s.push(' ');
        push_cents(&mut s, 3_000_000);
        assert_eq!(s, "0 18446744073709551615 0.05 9999.99 30000.00");
    }

    /// A whole warehouse, table by table against the spec. Slow in debug builds: run with
    /// `cargo test --release -- --ignored whole_warehouse` (its time is the generation speed).
    #[test]
    #[ignore]
    fn whole_warehouse_counts() {
        let mut per_table: HashMap<&str, u64> = HashMap::new();
        let mut bytes = 0usize;
        for b in warehouse_batches(1, SEED, &C, NOW, 1 << 20) {
            assert!(b.sql.len() <= 1 << 20);
            bytes += b.sql.len();
            *per_table.entry(b.table).or_default() += b.rows;
        }
        for table in fleetbench_model::workloads::tpcc::TABLES {
            let want = warehouse_rows(table).unwrap_or_else(|| order_line_rows(1, SEED));
            assert_eq!(per_table.get(table).copied().unwrap_or(0), want, "{table}");
        }
        assert!((60 << 20..120 << 20).contains(&bytes), "{bytes} bytes");
    }
}
