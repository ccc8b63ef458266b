//! The report hooks (`sysbench.hooks.report_intermediate` and `report_cumulative`): run
//! once, on the coordinator, with the figures merged over every agent, in a state of
//! their own on a thread of their own (a Lua state stays on one thread), and sysbench's
//! ready-made hooks (`sysbench.report_default`, `report_csv`, `report_json`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;

use mlua::{Function, Lua, Table};

use crate::state::{self, ScriptError, StateEnv};
use fleetbench_model::workloads::script::Files;
use fleetbench_model::workloads::script::OptValue;

/// The figures of one interval (or of the whole run) as sysbench hands them to a hook:
/// counts, not rates; times and latencies in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stat {
    pub threads_running: u32,
    pub time_interval: f64,
    pub time_total: f64,
    /// The --percentile latency.
    pub latency_pct: f64,
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub errors: u64,
    pub reconnects: u64,
    /// Open loop: events waiting for a thread (intermediate only).
    pub queue_length: u64,
    pub concurrency: u64,
    /// The run's (cumulative only).
    pub latency_min: f64,
    pub latency_max: f64,
    pub latency_avg: f64,
    pub latency_sum: f64,
}

/// Which hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Intermediate,
    Cumulative,
}

impl Stat {
    fn to_table(&self, lua: &Lua, which: Which) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.set("threads_running", self.threads_running)?;
        t.set("time_interval", self.time_interval)?;
        t.set("time_total", self.time_total)?;
        t.set("latency_pct", self.latency_pct)?;
        t.set("events", self.events)?;
        t.set("reads", self.reads)?;
        t.set("writes", self.writes)?;
        t.set("other", self.other)?;
        t.set("errors", self.errors)?;
        t.set("reconnects", self.reconnects)?;
        match which {
            Which::Intermediate => {
                t.set("queue_length", self.queue_length)?;
                t.set("concurrency", self.concurrency)?;
            }
            Which::Cumulative => {
                t.set("latency_min", self.latency_min)?;
                t.set("latency_max", self.latency_max)?;
                t.set("latency_avg", self.latency_avg)?;
                t.set("latency_sum", self.latency_sum)?;
            }
        }
        Ok(t)
    }

    fn from_table(t: &Table) -> Stat {
        let f = |k: &str| t.get::<Option<f64>>(k).ok().flatten().unwrap_or(0.0);
        Stat {
            threads_running: f("threads_running") as u32,
            time_interval: f("time_interval"),
            time_total: f("time_total"),
            latency_pct: f("latency_pct"),
            events: f("events") as u64,
            reads: f("reads") as u64,
            writes: f("writes") as u64,
            other: f("other") as u64,
            errors: f("errors") as u64,
            reconnects: f("reconnects") as u64,
            queue_length: f("queue_length") as u64,
            concurrency: f("concurrency") as u64,
            latency_min: f("latency_min"),
            latency_max: f("latency_max"),
            latency_avg: f("latency_avg"),
            latency_sum: f("latency_sum"),
        }
    }
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

/// An interval's figures as the ready-made hooks print them, per second (latency in ms), in
/// their order in every hook: tps, qps, reads, writes, other, latency, errors, reconnects.
fn rates(s: &Stat) -> [f64; 8] {
    let secs = s.time_interval;
    [
        per_sec(s.events, secs),
        per_sec(s.reads + s.writes + s.other, secs),
        per_sec(s.reads, secs),
        per_sec(s.writes, secs),
        per_sec(s.other, secs),
        s.latency_pct * 1000.0,
        per_sec(s.errors, secs),
        per_sec(s.reconnects, secs),
    ]
}

/// sysbench.report_default's line: sysbench's interval line as its Lua hook prints it,
/// which differs from the line sysbench prints without hooks in one place: `err/s` has no
/// colon (sysbench 1.0.20 prints `err/s 0.00`, and scripts such as sysbench-tpcc's parse
/// that).
pub fn default_line(s: &Stat, percentile: f64) -> String {
    let [tps, qps, reads, writes, other, lat, errors, reconn] = rates(s);
    let (time, threads) = (s.time_total, s.threads_running);
    format!(
        "[ {time:.0}s ] thds: {threads} tps: {tps:.2} qps: {qps:.2} (r/w/o: {reads:.2}/{writes:.2}/{other:.2}) lat (ms,{percentile}%): {lat:.2} err/s {errors:.2} reconn/s: {reconn:.2}"
    )
}

/// sysbench.report_csv's line: time, threads, tps, qps, reads, writes, other per second,
/// latency (ms), errors and reconnects per second.
pub fn csv_line(s: &Stat) -> String {
    let mut line = format!("{:.0},{}", s.time_total, s.threads_running);
    for f in rates(s) {
        line.push_str(&format!(",{f:.2}"));
    }
    line
}

/// sysbench.report_json's object, laid out as sysbench lays it out (no newline after it:
/// the calls of one hook make one JSON array, see [`JsonArrays`]).
pub fn json_object(s: &Stat) -> String {
    let [tps, qps, reads, writes, other, lat, errors, reconn] = rates(s);
    let (time, threads) = (s.time_total, s.threads_running);
    format!(
        "  {{\n    \"time\": {time:4.0},\n    \"threads\": {threads},\n    \"tps\": {tps:.2},\n    \"qps\": {{\n      \"total\": {qps:.2},\n      \"reads\": {reads:.2},\n      \"writes\": {writes:.2},\n      \"other\": {other:.2}\n    }},\n    \"latency\": {lat:.2},\n    \"errors\": {errors:.2},\n    \"reconnects\": {reconn:.2}\n  }}"
    )
}

/// sysbench.report_json's output over a run, as sysbench writes it: each hook's calls make
/// one JSON array (`[` before the first object, `,` between objects); the intermediate
/// hook's array closes when the run ends (before the cumulative report), the cumulative
/// hook's right after it. A parser reads each array whole.
#[derive(Debug, Default)]
pub struct JsonArrays {
    /// Whether the array of Intermediate (0) and Cumulative (1) is open.
    open: [bool; 2],
}

impl JsonArrays {
    fn slot(which: Which) -> usize {
        match which {
            Which::Intermediate => 0,
            Which::Cumulative => 1,
        }
    }

    /// What goes before an object that `which`'s hook writes.
    pub fn before_object(&mut self, which: Which) -> &'static str {
        let open = &mut self.open[Self::slot(which)];
        if std::mem::replace(open, true) {
            ",\n"
        } else {
            "[\n"
        }
    }

    /// What closes `which`'s array ("" when it is not open).
    pub fn close(&mut self, which: Which) -> &'static str {
        if std::mem::take(&mut self.open[Self::slot(which)]) {
            "\n]\n"
        } else {
            ""
        }
    }
}

enum Ask {
    Call(Which, Stat, mpsc::Sender<Result<(), ScriptError>>),
    /// The run is over: close what is open.
    Finish(mpsc::Sender<()>),
}

/// The coordinator's state for a script's report hooks, on a thread of its own.
pub struct Host {
    tx: mpsc::Sender<Ask>,
    /// Which hooks the script sets.
    pub intermediate: bool,
    pub cumulative: bool,
}

impl Host {
    /// Loads the script in a state of its own (its output through `output`) and keeps it
    /// for the hooks; None when the script sets neither hook.
    pub fn start(
        files: Files,
        command: String,
        opt: Vec<OptValue>,
        argv: Vec<String>,
        percentile: f64,
        output: impl Fn(&str) + Send + 'static,
    ) -> Result<Option<Host>, ScriptError> {
        let (tx, rx) = mpsc::channel::<Ask>();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("fb-script-hooks".into())
            .spawn(move || {
                let output: Rc<dyn Fn(&str)> = Rc::new(output);
                let arrays = Rc::new(RefCell::new(JsonArrays::default()));
                // The hook running now: report_json's objects go to its array.
                let running = Rc::new(Cell::new(Which::Intermediate));
                let made = (|| {
                    let env = StateEnv {
                        files: &files,
                        command: &command,
                        tid: 0,
                        opt: &opt,
                        output: output.clone(),
                        driver: "mysql",
                        fast_calls: false,
                        argv: &argv,
                    };
                    let (arrays, running) = (arrays.clone(), running.clone());
                    let lua = state::new_state(&env, |lua, raw| {
                        let out = output.clone();
                        raw.set(
                            "report",
                            lua.create_function(move |_, (kind, t): (String, Table)| {
                                let s = Stat::from_table(&t);
                                match kind.as_str() {
                                    "csv" => out(&format!("{}\n", csv_line(&s))),
                                    "json" => {
                                        let before =
                                            arrays.borrow_mut().before_object(running.get());
                                        out(&format!("{before}{}", json_object(&s)));
                                    }
                                    _ => out(&format!("{}\n", default_line(&s, percentile))),
                                }
                                Ok(())
                            })?,
                        )
                    })?;
                    state::run_script(&lua, &files)?;
                    Ok::<_, ScriptError>(lua)
                })();
                let lua = match made {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let hook = |which: Which| -> Option<Function> {
                    let sb: Table = lua.globals().get("sysbench").ok()?;
                    let hooks: Table = sb.get("hooks").ok()?;
                    let name = match which {
                        Which::Intermediate => "report_intermediate",
                        Which::Cumulative => "report_cumulative",
                    };
                    hooks.get::<Option<Function>>(name).ok().flatten()
                };
                let set = (
                    hook(Which::Intermediate).is_some(),
                    hook(Which::Cumulative).is_some(),
                );
                let _ = ready_tx.send(Ok(set));
                let close = |which: Which| {
                    let end = arrays.borrow_mut().close(which);
                    if !end.is_empty() {
                        output(end);
                    }
                };
                while let Ok(ask) = rx.recv() {
                    let (which, stat, reply) = match ask {
                        Ask::Call(which, stat, reply) => (which, stat, reply),
                        Ask::Finish(done) => {
                            close(Which::Intermediate);
                            close(Which::Cumulative);
                            let _ = done.send(());
                            continue;
                        }
                    };
                    // The intervals' array ends before the end report, as in sysbench.
                    if which == Which::Cumulative {
                        close(Which::Intermediate);
                    }
                    running.set(which);
                    let r = match (hook(which), stat.to_table(&lua, which)) {
                        (Some(f), Ok(t)) => state::call::<_, ()>(&lua, &f, t),
                        (None, _) => Ok(()),
                        (_, Err(e)) => Err(ScriptError::from_lua(&e)),
                    };
                    if which == Which::Cumulative {
                        close(Which::Cumulative);
                    }
                    let _ = reply.send(r);
                }
            })
            .map_err(|e| ScriptError::new(format!("cannot start the hooks' thread: {e}")))?;
        let (intermediate, cumulative) = ready_rx
            .recv()
            .map_err(|_| ScriptError::new("the hooks' thread ended"))??;
        if !intermediate && !cumulative {
            return Ok(None);
        }
        Ok(Some(Host {
            tx,
            intermediate,
            cumulative,
        }))
    }

    /// The run is over: closes the JSON arrays the hooks left open, and waits for it.
    pub fn finish(&self) {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(Ask::Finish(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Calls a hook with `stat` and waits until it returned.
    pub fn call(&self, which: Which, stat: Stat) -> Result<(), ScriptError> {
        let (tx, rx) = mpsc::channel();
        self.tx
            .send(Ask::Call(which, stat, tx))
            .map_err(|_| ScriptError::new("the hooks' thread ended"))?;
        rx.recv()
            .map_err(|_| ScriptError::new("the hooks' thread ended"))?
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A hooks state of the one-file script `text`, and what it printed.
    fn host_of(text: &str) -> (Host, Arc<Mutex<String>>) {
        let files = Files {
            path: "h.lua".into(),
            main: "h.lua".into(),
            files: vec![("h.lua".into(), text.into())],
        };
        let out = Arc::new(Mutex::new(String::new()));
        let sink = out.clone();
        let host = Host::start(
            files,
            "run".into(),
            Vec::new(),
            Vec::new(),
            95.0,
            move |s| sink.lock().unwrap().push_str(s),
        )
        .unwrap()
        .expect("the script sets a hook");
        (host, out)
    }

    #[test]
    fn hooks_run_in_their_own_state_with_the_figures() {
        let (host, out) = host_of(
            r#"
calls = 0
function sysbench.hooks.report_intermediate(stat)
  calls = calls + 1
  print(string.format("n=%d events=%d reads=%d", calls, stat.events, stat.reads))
  sysbench.report_csv(stat)
end
"#,
        );
        assert!(host.intermediate && !host.cumulative);
        let stat = Stat {
            threads_running: 2,
            time_interval: 2.0,
            time_total: 4.0,
            events: 10,
            reads: 40,
            latency_pct: 0.0015,
            ..Stat::default()
        };
        host.call(Which::Intermediate, stat.clone()).unwrap();
        host.call(Which::Intermediate, stat).unwrap();
        assert_eq!(
            *out.lock().unwrap(),
            "n=1 events=10 reads=40\n4,2,5.00,20.00,20.00,0.00,0.00,1.50,0.00,0.00\n\
             n=2 events=10 reads=40\n4,2,5.00,20.00,20.00,0.00,0.00,1.50,0.00,0.00\n"
        );
    }

    #[test]
    fn the_default_line_is_sysbench_s() {
        let s = Stat {
            threads_running: 4,
            time_interval: 1.0,
            time_total: 3.0,
            events: 100,
            reads: 1400,
            writes: 400,
            other: 200,
            latency_pct: 0.01234,
            ..Stat::default()
        };
        assert_eq!(
            default_line(&s, 95.0),
            "[ 3s ] thds: 4 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 12.34 err/s 0.00 reconn/s: 0.00"
        );
    }

    #[test]
    fn report_json_writes_one_array_per_hook_as_sysbench() {
        let (host, out) = host_of(
            "sysbench.hooks.report_intermediate = sysbench.report_json\n\
             sysbench.hooks.report_cumulative = sysbench.report_json\n",
        );
        assert!(host.intermediate && host.cumulative);
        let stat = |t: f64| Stat {
            threads_running: 2,
            time_interval: 1.0,
            time_total: t,
            events: 10,
            reads: 40,
            latency_pct: 0.0015,
            ..Stat::default()
        };
        host.call(Which::Intermediate, stat(1.0)).unwrap();
        host.call(Which::Intermediate, stat(2.0)).unwrap();
        host.call(Which::Cumulative, stat(2.0)).unwrap();
        host.finish();
        let text = out.lock().unwrap().clone();
        // sysbench's layout, to the space.
        assert!(
            text.starts_with(
                "[\n  {\n    \"time\":    1,\n    \"threads\": 2,\n    \"tps\": 10.00,\n    \"qps\": {\n      \"total\": 40.00,\n      \"reads\": 40.00,\n      \"writes\": 0.00,\n      \"other\": 0.00\n    },\n    \"latency\": 1.50,\n    \"errors\": 0.00,\n    \"reconnects\": 0.00\n  },\n  {\n    \"time\":    2,"
            ),
            "{text}"
        );
        // Two whole arrays: the intervals' (closed before the end report) and the end's.
        let mut arrays = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
        let first = arrays.next().unwrap().unwrap();
        let second = arrays.next().unwrap().unwrap();
        assert!(arrays.next().is_none(), "{text}");
        assert_eq!(first.as_array().unwrap().len(), 2);
        assert_eq!(first[1]["time"], 2);
        assert_eq!(second.as_array().unwrap().len(), 1);
        assert_eq!(second[0]["qps"]["reads"], 40.0);
    }
}
