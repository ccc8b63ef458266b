//! HdrHistogram interval logs (`--hlog FILE`): the merged latency histogram of every
//! interval, and with `--hlog-per-agent` each agent's as well (tagged with its address), in
//! the interval-log format of HdrHistogram's own tools (V2 compressed histograms, base64;
//! HistogramLogAnalyzer, hdr-plot and the Java and Python libraries read it). Values are
//! microseconds; the Interval_Max column is in milliseconds.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The column legend HdrHistogram's readers expect before the first interval.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// An interval log being written: header first, then one line per histogram.
pub struct Hlog<W: Write> {
    out: W,
    serializer: V2DeflateSerializer,
    /// The serialized histogram of the line being written.
    buf: Vec<u8>,
}

/// Histograms hold microseconds; Interval_Max is given in milliseconds.
const MAX_VALUE_DIVISOR: f64 = 1000.0;

impl<W: Write> Hlog<W> {
    /// Starts a log whose interval timestamps count from `base` (the measurement's start),
    /// with `title` as its first comment.
    pub fn begin(mut out: W, title: &str, base: SystemTime) -> io::Result<Self> {
        out.write_all(header(title, base).as_bytes())?;
        Ok(Hlog {
            out,
            serializer: V2DeflateSerializer::new(),
            buf: Vec::new(),
        })
    }

    /// Writes the histogram of an interval that began `start` after the base time and lasted
    /// `length`; `tag` names whose it is (None: the merged one).
    pub fn write(
        &mut self,
        h: &Histogram<u64>,
        start: Duration,
        length: Duration,
        tag: Option<&str>,
    ) -> io::Result<()> {
        self.buf.clear();
        self.serializer
            .serialize(h, &mut self.buf)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        if let Some(t) = tag {
            write!(self.out, "Tag={},", sanitize_tag(t))?;
        }
        writeln!(
            self.out,
            "{:.3},{:.3},{:.3},{}",
            start.as_secs_f64(),
            length.as_secs_f64(),
            // Microseconds recorded; the max column in milliseconds, as the header says.
            h.max() as f64 / MAX_VALUE_DIVISOR,
            base64::engine::general_purpose::STANDARD.encode(&self.buf)
        )
    }

    /// Flushes what was written and hands the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// An interval log written while a run goes: the file is created before the run (a bad
/// path fails first), the header written at Go, and a line per interval as it completes, so
/// an interrupted run keeps what it logged. Write errors are kept and reported at the end.
pub struct RunLog {
    path: std::path::PathBuf,
    /// The file until the header is written.
    file: Option<io::BufWriter<std::fs::File>>,
    log: Option<Hlog<io::BufWriter<std::fs::File>>>,
    tick: Duration,
    per_agent: bool,
    error: Option<io::Error>,
    /// A regular file this run created, which may be removed again if nothing was logged
    /// (never standard output, a link, a FIFO or a device).
    removable: bool,
}

impl RunLog {
    /// Opens `path` as crate::output says (`-` is standard output; a link, FIFO or device
    /// is written in place).
    pub fn create(path: &std::path::Path, per_agent: bool, tick: Duration) -> io::Result<Self> {
        let (file, removable) = crate::output::open_progressive(path)?;
        Ok(RunLog {
            removable,
            path: path.to_path_buf(),
            file: Some(io::BufWriter::new(file)),
            log: None,
            tick,
            per_agent,
            error: None,
        })
    }

    /// Writes the header: interval timestamps count from `base`, the measurement's start.
    pub fn begin(&mut self, title: &str, base: SystemTime) {
        if let Some(f) = self.file.take() {
            match Hlog::begin(f, title, base) {
                Ok(l) => self.log = Some(l),
                Err(e) => self.failed(e),
            }
        }
    }

    /// One merged interval (untagged).
    pub fn merged(&mut self, iv: &crate::merge::MergedInterval) {
        let start = iv.end.saturating_sub(iv.duration);
        self.line(&iv.latency.hist, start, iv.duration, None);
    }

    /// One agent's part of tick `seq`, tagged with its address (with `--hlog-per-agent`).
    pub fn agent(&mut self, addr: &str, seq: u32, part: &crate::merge::IntervalPart) {
        if self.per_agent {
            let start = self.tick.saturating_mul(seq.saturating_sub(1));
            self.line(&part.latency.hist, start, part.duration, Some(addr));
        }
    }

    fn line(&mut self, h: &Histogram<u64>, start: Duration, length: Duration, tag: Option<&str>) {
        if let Some(l) = &mut self.log
            && let Err(e) = l.write(h, start, length, tag)
        {
            self.failed(e);
        }
    }

    fn failed(&mut self, e: io::Error) {
        self.error.get_or_insert(e);
        self.log = None;
    }

    /// The run failed: a log that never began is removed (it holds nothing); one that did
    /// is kept with what it logged, and the returned line says so.
    pub fn abandon(mut self) -> Option<String> {
        match self.log.take() {
            None => {
                drop(self.file.take());
                if self.removable {
                    let _ = std::fs::remove_file(&self.path);
                }
                None
            }
            Some(l) => {
                let _ = l.finish();
                Some(format!(
                    "the HdrHistogram log {} holds the intervals logged before the failure",
                    self.path.display()
                ))
            }
        }
    }

    /// Flushes the file; the first error met on the way, with the file's name.
    pub fn finish(mut self) -> Result<(), String> {
        let flushed = match self.log.take() {
            Some(l) => l.finish().map(drop),
            None => self.file.take().map_or(Ok(()), |mut f| f.flush()),
        };
        match self.error.take().map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(format!(
                "cannot write the HdrHistogram log {}: {e}",
                self.path.display()
            )),
        }
    }
}

/// The log's header: a title, the format version, the start and base times (seconds since
/// the epoch, and the start as RFC 3339 UTC for people) and the legend.
pub fn header(title: &str, base: SystemTime) -> String {
    let since = base.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs_f64();
    let title = title.replace('\n', " ");
    format!(
        "#[{title}]\n#[Histogram log format version 1.3]\n\
         #[StartTime: {secs:.3} (seconds since epoch), {}]\n\
         #[BaseTime: {secs:.3} (seconds since epoch)]\n\
         #[MaxValueDivisor: {MAX_VALUE_DIVISOR:.3}]\n{LEGEND}\n",
        super::meta::rfc3339(since.as_secs())
    )
}

/// A tag as interval logs allow it: no ',', ' ', '\r' or '\n' (each becomes '_').
pub fn sanitize_tag(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect();
    if t.is_empty() { "_".into() } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn tags_lose_the_characters_the_format_reserves() {
        assert_eq!(sanitize_tag("127.0.0.1:7600"), "127.0.0.1:7600");
        assert_eq!(sanitize_tag("a b,c\nd"), "a_b_c_d");
        assert_eq!(sanitize_tag(""), "_");
    }

    #[test]
    fn a_log_reads_back_interval_by_interval() {
        let base = UNIX_EPOCH + Duration::from_millis(1_796_166_245_500);
        let mut log = Hlog::begin(Vec::new(), "fleetbench cpu", base).unwrap();
        let mut a = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for us in [150, 220, 9_000] {
            a.record(us).unwrap();
        }
        let mut b = a.clone();
        b.record(40_000).unwrap();
        log.write(&a, Duration::ZERO, Duration::from_secs(1), None)
            .unwrap();
        log.write(
            &b,
            Duration::from_secs(1),
            Duration::from_millis(500),
            Some("127.0.0.1:7600"),
        )
        .unwrap();
        let bytes = log.finish().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("#[fleetbench cpu]\n#[Histogram log format version 1.3]\n#[StartTime: 1796166245.500 (seconds since epoch), 2026-12-01T23:04:05Z]\n"), "{text}");
        assert!(text.contains(&format!("\n{LEGEND}\n")), "{text}");

        let mut starts = Vec::new();
        let mut back = Vec::new();
        for entry in IntervalLogIterator::new(&bytes) {
            match entry.unwrap() {
                LogEntry::Interval(h) => {
                    starts.push((
                        h.start_timestamp(),
                        h.duration(),
                        h.tag().map(|t| t.as_str().to_string()),
                    ));
                    // Interval_Max in milliseconds.
                    back.push((h.max(), {
                        let raw = base64::Engine::decode(
                            &base64::engine::general_purpose::STANDARD,
                            h.encoded_histogram(),
                        )
                        .unwrap();
                        let hist: Histogram<u64> = Deserializer::new()
                            .deserialize(&mut raw.as_slice())
                            .unwrap();
                        hist
                    }));
                }
                LogEntry::StartTime(t) | LogEntry::BaseTime(t) => {
                    assert_eq!(t, Duration::from_millis(1_796_166_245_500));
                }
            }
        }
        assert_eq!(
            starts,
            [
                (Duration::ZERO, Duration::from_secs(1), None),
                (
                    Duration::from_secs(1),
                    Duration::from_millis(500),
                    Some("127.0.0.1:7600".to_string())
                )
            ]
        );
        assert_eq!(back[0].1, a);
        assert_eq!(back[1].1, b);
        assert!((back[1].0 - 40.0).abs() < 0.1, "{}", back[1].0);
    }
}
