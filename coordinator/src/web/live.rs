//! The live view: what the web page shows of the run in progress (or the last one), kept
//! up to date by the measured run and read once a second by the page's stream. Bounded: a
//! run's points beyond [`MAX_POINTS`] drop the oldest, and the page keeps no history of its
//! own it could lose.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

use fleetbench_model::host::HostFigures;

use crate::merge::MergedInterval;

/// Points kept per run: an hour of one-second intervals.
pub const MAX_POINTS: usize = 3600;

/// The live view, shared by the run and the web server.
#[derive(Debug, Default)]
pub struct LiveView {
    state: Mutex<Snapshot>,
}

/// What the page is sent: the run, its merged points, its agents, its warnings and, once it
/// is over, its report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Snapshot {
    /// Counts every change, so the page (and a test) can tell a new snapshot.
    pub version: u64,
    /// "waiting", "opening", "running", "done".
    pub state: String,
    pub title: String,
    pub run_id: String,
    /// The measured runs so far (a sweep's steps), this one included.
    pub runs: u32,
    pub opening: Option<(u64, u64)>,
    pub points: Vec<Point>,
    pub agents: BTreeMap<String, AgentLive>,
    pub warnings: Vec<String>,
    /// The run's (or the sweep's) report as the HTML report shows it, once done.
    pub report_html: Option<String>,
}

/// One merged interval.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Point {
    /// Seconds since the measurement began (the interval's end).
    pub t: f64,
    pub tps: f64,
    pub qps: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub threads: u32,
    /// Each agent's rate (events/s) in its last interval, in the order of the snapshot's
    /// `agents` (by address): numbers only, so an hour of points stays small.
    pub agents: Vec<f64>,
}

/// One agent as the page lists it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AgentLive {
    pub host: String,
    /// "opening", "running", "lost".
    pub state: String,
    /// Its last interval's rate (events/s).
    pub rate: f64,
    pub events: u64,
    /// Its host's CPU busy share over the last interval, where it sent its load.
    pub cpu_busy_pct: Option<f64>,
}

/// One view is equal only to itself (the run's settings compare by it).
impl PartialEq for LiveView {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl LiveView {
    fn with<R>(&self, f: impl FnOnce(&mut Snapshot) -> R) -> R {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let r = f(&mut s);
        s.version += 1;
        r
    }

    /// The snapshot's version and whether the run is done, without copying it: a stream
    /// copies only a snapshot it will send.
    pub fn version(&self) -> (u64, bool) {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        (s.version, s.state == "done")
    }

    /// The page's copy.
    pub fn snapshot(&self) -> Snapshot {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A run begins (`title`: the test, or the sweep step): its agents (address, host).
    pub fn begin(&self, title: &str, agents: &[(String, String)]) {
        self.with(|s| {
            s.state = "opening".into();
            s.title = title.into();
            s.runs += 1;
            s.points.clear();
            s.opening = None;
            s.report_html = None;
            s.agents = agents
                .iter()
                .map(|(addr, host)| {
                    let a = AgentLive {
                        host: host.clone(),
                        state: "opening".into(),
                        ..Default::default()
                    };
                    (addr.clone(), a)
                })
                .collect();
        });
    }

    pub fn opening(&self, open: u64, total: u64) {
        self.with(|s| s.opening = Some((open, total)));
    }

    /// Go: every agent runs.
    pub fn go(&self, run_id: &str) {
        self.with(|s| {
            s.state = "running".into();
            s.run_id = run_id.into();
            for a in s.agents.values_mut() {
                a.state = "running".into();
            }
        });
    }

    /// A merged interval, with the percentiles the page charts and each agent's last rate.
    pub fn interval(&self, iv: &MergedInterval) {
        let mut p = Point {
            t: iv.end.as_secs_f64(),
            tps: iv.events_per_sec(),
            qps: crate::merge::per_sec(iv.db.reads + iv.db.writes + iv.db.others, iv.duration),
            p95_ms: iv.latency.percentile_ms(95.0),
            p99_ms: iv.latency.percentile_ms(99.0),
            threads: iv.threads,
            agents: Vec::new(),
        };
        self.with(|s| {
            p.agents = s.agents.values().map(|a| a.rate).collect();
            push_point(&mut s.points, p);
        });
    }

    /// One agent's interval: its rate and its host's load; a saturated host is a warning,
    /// once per host, as the report would give it at the end.
    pub fn agent(&self, addr: &str, rate: f64, events: u64, load: Option<&HostFigures>) {
        self.with(|s| {
            let a = s.agents.entry(addr.to_string()).or_default();
            a.rate = rate;
            a.events = a.events.saturating_add(events);
            a.cpu_busy_pct = load.map(|l| l.cpu_busy_pct);
            if load.is_some_and(crate::report::hosts::saturated) {
                let host = if a.host.is_empty() { addr } else { a.host.as_str() };
                let w = format!(
                    "client host {host} is saturated (CPU {:.0} % busy): the figures may measure the client, not the server",
                    a.cpu_busy_pct.unwrap_or(0.0)
                );
                if !s.warnings.iter().any(|x| x.starts_with(&format!("client host {host} "))) {
                    s.warnings.push(w);
                }
            }
        });
    }

    /// Agents the run lost, and the warnings said at its end.
    pub fn end(&self, lost: &[String], warnings: Vec<String>) {
        self.with(|s| {
            for l in lost {
                if let Some(a) = s.agents.get_mut(l) {
                    a.state = "lost".into();
                }
            }
            // The report's own saturation warnings stand for the ones said as it went.
            s.warnings.retain(|w| !w.contains(" is saturated (CPU "));
            s.warnings.extend(warnings);
        });
    }

    /// The command is over: its report.
    pub fn done(&self, report_html: String) {
        self.with(|s| {
            s.state = "done".into();
            s.report_html = Some(report_html);
        });
    }
}

/// Appends `p`, dropping the oldest beyond [`MAX_POINTS`].
fn push_point(points: &mut Vec<Point>, p: Point) {
    if points.len() >= MAX_POINTS {
        points.remove(0);
    }
    points.push(p);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_goes_from_opening_to_done_and_keeps_its_last_points() {
        let v = LiveView::default();
        v.begin("oltp_read_only", &[("a:7600".into(), "h1".into())]);
        let s = v.snapshot();
        assert_eq!((s.state.as_str(), s.runs), ("opening", 1));
        assert_eq!(s.agents["a:7600"].state, "opening");
        v.go("run-1");
        let busy = HostFigures {
            cpu_busy_pct: 97.0,
            cores: 2,
            ..Default::default()
        };
        v.agent("a:7600", 12.5, 25, Some(&busy));
        v.agent("a:7600", 12.5, 0, Some(&busy));
        v.agent("b:7600", 1.0, 1, None);
        assert_eq!(
            v.snapshot().warnings.len(),
            1,
            "{:?}",
            v.snapshot().warnings
        );
        assert!(v.snapshot().warnings[0].starts_with("client host h1 is saturated"));
        let s = v.snapshot();
        assert_eq!(s.agents["a:7600"].state, "running");
        assert_eq!(s.agents["a:7600"].events, 25);
        assert_eq!(s.agents.len(), 2);
        // A point holds the agents' rates in the order of the snapshot's agents.
        v.interval(&MergedInterval::default());
        assert_eq!(v.snapshot().points[0].agents, [12.5, 1.0]);
        v.end(&["a:7600".into()], vec!["an agent was lost".into()]);
        v.done("<html></html>".into());
        let s = v.snapshot();
        assert_eq!(s.agents["a:7600"].state, "lost");
        // The saturation said as it went gives way to the report's own warnings.
        assert_eq!((s.state.as_str(), s.warnings.len()), ("done", 1));
        assert!(s.version > 5);
        let mut pts = Vec::new();
        for i in 0..MAX_POINTS + 2 {
            push_point(
                &mut pts,
                Point {
                    t: i as f64,
                    ..Default::default()
                },
            );
        }
        assert_eq!(pts.len(), MAX_POINTS);
        assert_eq!(pts[0].t, 2.0);
    }
}
