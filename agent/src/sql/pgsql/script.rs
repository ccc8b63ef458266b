//! What pgbench's script commands (`fleetbench pgbench -f`) need of the lean client
//! beyond the hot path's one reply per statement: the column names and rows that
//! `\gset` and `\aset` keep, compound simple queries (`\;`), statements prepared as
//! written (no `?` placeholders rewritten), and pipelines (Bind and Execute sent
//! without waiting; one Sync at the end).

use postgres_protocol::message::frontend;

use super::{PgConn, PgStmt, command_reply, parse_data_row};
use crate::sql::{Param, Reply, SqlError};

/// What a command keeps of its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// Counted only.
    Nothing,
    /// `\gset`: the last statement's one row.
    OneRow,
    /// `\aset`: every statement's last row.
    LastRows,
}

/// A script command's reply.
#[derive(Debug, Default)]
pub struct ScriptReply {
    /// Statements that returned rows, changed rows, or neither (sysbench's counting).
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    /// Columns to keep as variables: name and value (None for NULL), in order.
    pub assigns: Vec<(String, Option<String>)>,
    /// ReadyForQuery's transaction status: `I` idle, `T` in a transaction, `E` failed.
    pub status: u8,
}

/// The results of the statement being read.
#[derive(Default)]
struct Current {
    names: Vec<String>,
    rows: u64,
    /// Its first row (`\gset`) or its last (`\aset`).
    kept: Option<Vec<Option<String>>>,
}

impl PgConn {
    /// Parses `sql` as a named statement as written (`$n` parameters), for
    /// `-M prepared`.
    pub fn prepare_as_is(&mut self, sql: &str) -> Result<PgStmt, SqlError> {
        self.next_stmt += 1;
        let name = format!("fb{}", self.next_stmt);
        self.wbuf.clear();
        frontend::parse(&name, sql, std::iter::empty(), &mut self.wbuf)?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.finish()?;
        Ok(PgStmt {
            name,
            params: 0,
            simple: None,
            binary: false,
        })
    }

    /// Runs `sql` (one statement or several joined by `;`) as a simple query.
    pub fn script_simple(&mut self, sql: &str, cap: Capture) -> Result<ScriptReply, SqlError> {
        self.wbuf.clear();
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        self.script_reply(cap)
    }

    /// Sends one statement through the extended protocol: `stmt` if prepared, else
    /// `sql` parsed as the unnamed statement, bound to `params` (text). With `sync`
    /// it is Synced and its reply read; without (in a pipeline) it is only sent, and
    /// [`Self::script_sync`] reads the pipeline's replies.
    pub fn script_extended(
        &mut self,
        stmt: Option<&PgStmt>,
        sql: &str,
        params: &[Param],
        cap: Capture,
        sync: bool,
    ) -> Result<Option<ScriptReply>, SqlError> {
        self.wbuf.clear();
        let name = match stmt {
            Some(s) => s.name.as_str(),
            None => {
                frontend::parse("", sql, std::iter::empty(), &mut self.wbuf)?;
                ""
            }
        };
        self.bind(name, params, false)?;
        if cap != Capture::Nothing {
            // The column names come with a RowDescription, which Describe asks for.
            frontend::describe(b'P', "", &mut self.wbuf)?;
        }
        frontend::execute("", 0, &mut self.wbuf)?;
        if !sync {
            self.flush()?;
            return Ok(None);
        }
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.script_reply(cap).map(Some)
    }

    /// Ends a pipeline: Sync, then the replies of every statement sent since.
    pub fn script_sync(&mut self) -> Result<ScriptReply, SqlError> {
        self.wbuf.clear();
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.script_reply(Capture::Nothing)
    }

    /// Reads up to ReadyForQuery, keeping what `cap` asks for; an error leaves the
    /// transaction usable again (rolled back) before it is returned.
    fn script_reply(&mut self, cap: Capture) -> Result<ScriptReply, SqlError> {
        let mut out = ScriptReply::default();
        let mut cur = Current::default();
        let mut last: Option<Current> = None;
        let mut error = None;
        loop {
            let (tag, body) = self.next_message()?;
            match tag {
                b'T' => cur.names = row_names(&self.rbuf[body])?,
                b'D' => {
                    cur.rows += 1;
                    let keep = match cap {
                        Capture::Nothing => false,
                        Capture::OneRow => cur.rows == 1,
                        Capture::LastRows => true,
                    };
                    if keep {
                        cur.kept = Some(parse_data_row(&self.rbuf[body])?);
                    }
                }
                b'C' => {
                    let described = !cur.names.is_empty();
                    match command_reply(&self.rbuf[body], described, cur.rows) {
                        Reply::Rows(_) => out.reads += 1,
                        Reply::Ok { affected_rows } if affected_rows > 0 => out.writes += 1,
                        Reply::Ok { .. } => out.others += 1,
                    }
                    let done = std::mem::take(&mut cur);
                    if cap == Capture::LastRows
                        && let Some(row) = &done.kept
                    {
                        out.assigns
                            .extend(done.names.iter().cloned().zip(row.iter().cloned()));
                    }
                    last = Some(done);
                }
                b'E' => error = Some(self.error_of(body)),
                b'Z' => {
                    out.status = self.rbuf[body].first().copied().unwrap_or(b'I');
                    break;
                }
                _ => {}
            }
        }
        if let Some(e) = error {
            if out.status == b'E' {
                self.roll_back()?;
            }
            return Err(e);
        }
        if cap == Capture::OneRow {
            let last = last.unwrap_or_default();
            if last.rows != 1 {
                return Err(SqlError::Protocol(format!(
                    "expected one row, got {}",
                    last.rows
                )));
            }
            let row = last.kept.unwrap_or_default();
            out.assigns = last.names.into_iter().zip(row).collect();
        }
        Ok(out)
    }
}

/// The column names of a RowDescription.
fn row_names(body: &[u8]) -> Result<Vec<String>, SqlError> {
    let short = || SqlError::Protocol("a short row description".into());
    let n = i16::from_be_bytes(
        body.get(..2)
            .ok_or_else(short)?
            .try_into()
            .unwrap_or([0; 2]),
    );
    let mut at = 2;
    let mut names = Vec::with_capacity(n.max(0) as usize);
    for _ in 0..n {
        let len = body[at..].iter().position(|&b| b == 0).ok_or_else(short)?;
        names.push(String::from_utf8_lossy(&body[at..at + len]).into_owned());
        // The name's NUL, then table oid, column, type oid, size, modifier and format.
        at += len + 1 + 18;
        if at > body.len() {
            return Err(short());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_descriptions_give_the_column_names() {
        let mut body = vec![0u8, 2];
        for name in ["two", "three"] {
            body.extend_from_slice(name.as_bytes());
            body.push(0);
            body.extend_from_slice(&[0; 18]);
        }
        assert_eq!(row_names(&body).unwrap(), vec!["two", "three"]);
        assert!(row_names(&body[..body.len() - 3]).is_err());
    }
}
