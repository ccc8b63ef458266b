//! A script file parsed into a [`Program`]: SQL commands (ended by `;`, by `\gset` or
//! `\aset`, or by the next meta command), `--` comments and empty lines skipped, meta
//! commands to the end of their line (continued by a backslash at a line's end), the
//! conditional blocks matched up and the pipelines checked, all before a run starts.

use crate::ScriptError;
use crate::expr::{self, Expr};
use crate::sql::{MAX_VARS, Piece, SqlText};
use crate::value::valid_name;

/// How an SQL command ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlEnd {
    /// `;`, or a meta command after it: results are counted, not kept.
    Plain,
    /// `\gset [prefix]`: the one row's columns become variables.
    Gset(String),
    /// `\aset [prefix]`: every statement's last row's columns become variables.
    Aset(String),
}

/// `\sleep`'s duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SleepFor {
    Const(i64),
    Var(String),
}

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Sql {
        sql: SqlText,
        end: SqlEnd,
    },
    Set {
        var: String,
        expr: Expr,
    },
    /// `\sleep`: the amount and microseconds per unit.
    Sleep {
        amount: SleepFor,
        unit_us: u64,
    },
    /// `\if`: where to go when false (the block's next `\elif`, `\else` or `\endif`).
    If {
        cond: Expr,
        next: usize,
    },
    /// `\elif`: reached by a jump it is tested (false: on to `next`); reached by running
    /// off the branch before it, it goes to `end` (its `\endif`).
    Elif {
        cond: Expr,
        next: usize,
        end: usize,
    },
    /// `\else`: reached by running off the branch before it, go to `end`.
    Else {
        end: usize,
    },
    Endif,
    StartPipeline,
    EndPipeline,
}

/// A parsed script: its commands and, for each, its first line as `-r` lists it and its
/// line in the file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub commands: Vec<Command>,
    pub listing: Vec<String>,
    pub lines: Vec<usize>,
}

impl Program {
    /// Parses a script's text.
    pub fn parse(text: &str) -> Result<Program, ScriptError> {
        let mut p = Scanner {
            chars: text.chars().collect(),
            pos: 0,
            line: 1,
            col: 1,
            out: Program::default(),
        };
        p.run()?;
        let end = Pos {
            line: p.line,
            col: p.col,
        };
        let mut prog = p.out;
        link_blocks(&mut prog, end)?;
        check_pipelines(&prog, end)?;
        if prog.commands.is_empty() {
            return Err(end.error("empty command list for script"));
        }
        Ok(prog)
    }

    /// Refuses what the query mode cannot run: pipelines need the extended protocol
    /// (`-M extended` or `prepared`), and `\;` compounds the simple one.
    pub fn check_mode(&self, extended: bool) -> Result<(), ScriptError> {
        for (c, &line) in self.commands.iter().zip(&self.lines) {
            let at = Pos { line, col: 1 };
            match c {
                Command::StartPipeline if !extended => {
                    return Err(at.error("pipeline mode requires the extended query protocol: use -M extended or -M prepared"));
                }
                Command::Sql { sql, .. } if extended && sql.statements > 1 => {
                    return Err(at.error("several statements joined by \\; need -M simple (the extended protocol takes one statement per command)"));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether any command reads `:name` (in SQL or an expression).
    pub fn uses(&self, name: &str) -> bool {
        self.commands.iter().any(|c| match c {
            Command::Sql { sql, .. } => sql.pieces.iter().any(|p| *p == Piece::Var(name.into())),
            Command::Set { expr, .. }
            | Command::If { cond: expr, .. }
            | Command::Elif { cond: expr, .. } => expr.reads(name),
            Command::Sleep {
                amount: SleepFor::Var(v),
                ..
            } => v == name,
            _ => false,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Pos {
    line: usize,
    col: usize,
}

impl Pos {
    fn error(self, m: impl Into<String>) -> ScriptError {
        ScriptError {
            line: self.line,
            column: self.col,
            message: m.into(),
        }
    }
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    col: usize,
    out: Program,
}

impl Scanner {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn at(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn push(&mut self, c: Command, listing: String, line: usize) {
        self.out.commands.push(c);
        self.out.listing.push(listing);
        self.out.lines.push(line);
    }

    fn run(&mut self) -> Result<(), ScriptError> {
        loop {
            while self.peek(0).is_some_and(char::is_whitespace) {
                self.bump();
            }
            match (self.peek(0), self.peek(1)) {
                (None, _) => return Ok(()),
                (Some('-'), Some('-')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('\\'), _) => self.meta(None)?,
                _ => self.sql()?,
            }
        }
    }

    /// One SQL command, up to its `;` or a meta command outside quotes and comments.
    fn sql(&mut self) -> Result<(), ScriptError> {
        let start = self.at();
        let mut sql = SqlText {
            pieces: Vec::new(),
            statements: 1,
        };
        let mut lit = String::new();
        let mut vars = 0;
        while let Some(c) = self.peek(0) {
            match c {
                ';' => {
                    self.bump();
                    lit.push(';');
                    break;
                }
                '\\' if self.peek(1) == Some(';') => {
                    self.bump();
                    self.bump();
                    lit.push(';');
                    sql.statements += 1;
                }
                '\\' => break,
                '\'' | '"' => self.quoted(c, &mut lit)?,
                '$' if self.dollar_tag().is_some() => self.dollar_quoted(&mut lit)?,
                '-' if self.peek(1) == Some('-') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        lit.push(self.bump().unwrap_or(' '));
                    }
                }
                '/' if self.peek(1) == Some('*') => self.block_comment(&mut lit)?,
                ':' if self.peek(1) == Some(':') => {
                    lit.push_str("::");
                    self.bump();
                    self.bump();
                }
                ':' if self.peek(1).is_some_and(|c| c.is_alphabetic() || c == '_') => {
                    self.bump();
                    let mut name = String::new();
                    while let Some(c) = self.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
                        name.push(c);
                        self.bump();
                    }
                    vars += 1;
                    if vars > MAX_VARS {
                        return Err(self.at().error(format!(
                            "too many variables in one command (at most {MAX_VARS})"
                        )));
                    }
                    sql.pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                    sql.pieces.push(Piece::Var(name));
                }
                _ => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        if !lit.trim().is_empty() || sql.pieces.iter().any(|p| matches!(p, Piece::Var(_))) {
            sql.pieces.push(Piece::Lit(lit.trim_end().to_string()));
        }
        sql.pieces
            .retain(|p| !matches!(p, Piece::Lit(l) if l.is_empty()));
        let first = sql.source().lines().next().unwrap_or("").trim().to_string();
        let text_start = self.out.commands.len();
        if !sql.pieces.is_empty() {
            self.push(
                Command::Sql {
                    sql,
                    end: SqlEnd::Plain,
                },
                first,
                start.line,
            );
        }
        // A meta command right after the text may end it (\gset, \aset).
        if self.peek(0) == Some('\\') {
            let sql_before = (self.out.commands.len() > text_start).then_some(text_start);
            self.meta(sql_before)?;
        }
        Ok(())
    }

    fn quoted(&mut self, q: char, lit: &mut String) -> Result<(), ScriptError> {
        let start = self.at();
        lit.push(q);
        self.bump();
        loop {
            match self.bump() {
                None => return Err(start.error("unterminated quoted string")),
                Some(c) if c == q => {
                    lit.push(c);
                    if self.peek(0) == Some(q) {
                        lit.push(q);
                        self.bump();
                        continue;
                    }
                    return Ok(());
                }
                Some(c) => lit.push(c),
            }
        }
    }

    /// The `$tag$` opening a dollar-quoted string at the cursor, if one does.
    fn dollar_tag(&self) -> Option<String> {
        let mut k = 1;
        let mut tag = String::from("$");
        while let Some(c) = self.peek(k) {
            tag.push(c);
            if c == '$' {
                return Some(tag);
            }
            if !(c.is_alphanumeric() || c == '_') || (k == 1 && c.is_ascii_digit()) {
                return None;
            }
            k += 1;
        }
        None
    }

    fn dollar_quoted(&mut self, lit: &mut String) -> Result<(), ScriptError> {
        let start = self.at();
        let tag = self.dollar_tag().unwrap_or_default();
        for _ in 0..tag.chars().count() {
            lit.push(self.bump().unwrap_or('$'));
        }
        loop {
            if self.peek(0).is_none() {
                return Err(start.error("unterminated dollar-quoted string"));
            }
            if self.dollar_tag().as_deref() == Some(tag.as_str()) {
                for _ in 0..tag.chars().count() {
                    lit.push(self.bump().unwrap_or('$'));
                }
                return Ok(());
            }
            lit.push(self.bump().unwrap_or(' '));
        }
    }

    fn block_comment(&mut self, lit: &mut String) -> Result<(), ScriptError> {
        let start = self.at();
        let mut depth = 0;
        loop {
            match (self.peek(0), self.peek(1)) {
                (None, _) => return Err(start.error("unterminated /* comment")),
                (Some('/'), Some('*')) => depth += 1,
                (Some('*'), Some('/')) => depth -= 1,
                _ => {
                    lit.push(self.bump().unwrap_or(' '));
                    continue;
                }
            }
            lit.push(self.bump().unwrap_or(' '));
            lit.push(self.bump().unwrap_or(' '));
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// A meta command at the cursor (a backslash), to the end of its line; `sql` is the
    /// index of the SQL command it follows without a `;`, which `\gset`/`\aset` end.
    fn meta(&mut self, sql: Option<usize>) -> Result<(), ScriptError> {
        let start = self.at();
        let mut text = String::new();
        let mut cols = Vec::new();
        self.bump();
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            if c == '\\' && self.peek(1) == Some('\n') {
                self.bump();
                self.bump();
                text.push(' ');
                cols.push(self.at());
                continue;
            }
            cols.push(self.at());
            text.push(c);
            self.bump();
        }
        let name_len = text.find(|c: char| c.is_whitespace()).unwrap_or(text.len());
        let name = text[..name_len].to_ascii_lowercase();
        let rest = text[name_len..].trim();
        // Where the character at byte offset `b` of `text` came from.
        let col_of = |b: usize| -> Pos {
            let k = text[..b.min(text.len())].chars().count();
            match (cols.get(k), cols.last()) {
                (Some(p), _) => *p,
                // Just past the text's end: the column after its last character.
                (None, Some(p)) => Pos {
                    line: p.line,
                    col: p.col + 1,
                },
                (None, None) => start,
            }
        };
        let listing = format!("\\{}", text.trim_end());
        let args_at = name_len + (text.len() - name_len - text[name_len..].trim_start().len());
        let cmd = match name.as_str() {
            "gset" | "aset" => return self.end_sql(sql, &name, rest, start),
            "set" => self.set(rest, &text, args_at, &col_of)?,
            "sleep" => sleep(rest).map_err(|m| col_of(args_at).error(m))?,
            "if" | "elif" => {
                let cond = expression(rest, args_at, &col_of)?;
                if name == "if" {
                    Command::If { cond, next: 0 }
                } else {
                    Command::Elif {
                        cond,
                        next: 0,
                        end: 0,
                    }
                }
            }
            "else" | "endif" | "startpipeline" | "endpipeline" if !rest.is_empty() => {
                return Err(col_of(args_at).error(format!("\\{name} takes no arguments")));
            }
            "else" => Command::Else { end: 0 },
            "endif" => Command::Endif,
            "startpipeline" => Command::StartPipeline,
            "endpipeline" => Command::EndPipeline,
            "setshell" | "shell" => {
                return Err(start.error(format!(
                    "\\{name} is not supported: agents run no shell commands"
                )));
            }
            "" => return Err(start.error("a meta command name must follow the backslash")),
            other => return Err(start.error(format!("invalid command \\{other}"))),
        };
        self.push(cmd, listing, start.line);
        Ok(())
    }

    /// `\set var expression`.
    fn set(
        &self,
        rest: &str,
        text: &str,
        args_at: usize,
        col_of: &dyn Fn(usize) -> Pos,
    ) -> Result<Command, ScriptError> {
        let var_len = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
        let var = rest[..var_len].trim_start_matches(':');
        if !valid_name(var) {
            return Err(col_of(args_at).error(format!(
                "\\set: invalid variable name \"{}\"",
                &rest[..var_len]
            )));
        }
        let e = rest[var_len..].trim_start();
        if e.is_empty() {
            return Err(col_of(text.len()).error("\\set: missing expression"));
        }
        let e_at = args_at + rest.len() - e.len();
        let expr = expression(e, e_at, col_of)?;
        Ok(Command::Set {
            var: var.to_string(),
            expr,
        })
    }

    /// `\gset`/`\aset` after the SQL command at `sql`.
    fn end_sql(
        &mut self,
        sql: Option<usize>,
        name: &str,
        rest: &str,
        at: Pos,
    ) -> Result<(), ScriptError> {
        let Some(i) = sql else {
            return Err(at.error(format!("\\{name} must follow an SQL command")));
        };
        if rest.contains(char::is_whitespace) {
            return Err(at.error(format!("\\{name} takes at most one argument, a prefix")));
        }
        if !rest.is_empty() && !valid_name(rest) {
            return Err(at.error(format!("\\{name}: invalid prefix \"{rest}\"")));
        }
        if let Command::Sql { end, .. } = &mut self.out.commands[i] {
            *end = if name == "gset" {
                SqlEnd::Gset(rest.to_string())
            } else {
                SqlEnd::Aset(rest.to_string())
            };
        }
        self.out.listing[i].push_str(&format!(" \\{name}"));
        Ok(())
    }
}

/// An expression at byte `at` of a meta command's text.
fn expression(e: &str, at: usize, col_of: &dyn Fn(usize) -> Pos) -> Result<Expr, ScriptError> {
    expr::parse(e).map_err(|pe| {
        let byte = e.char_indices().nth(pe.offset).map_or(e.len(), |(b, _)| b);
        col_of(at + byte).error(pe.message)
    })
}

/// `\sleep N [us|ms|s]` or `\sleep :var [unit]`.
fn sleep(rest: &str) -> Result<Command, String> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (amount, unit) = match words[..] {
        [a] => (a, "s"),
        [a, u] => (a, u),
        _ => {
            return Err(
                "\\sleep takes a number or a :variable and an optional unit (us, ms, s)".into(),
            );
        }
    };
    let unit_us = match unit.to_ascii_lowercase().as_str() {
        "us" => 1,
        "ms" => 1_000,
        "s" => 1_000_000,
        other => {
            return Err(format!(
                "\\sleep: unrecognized time unit \"{other}\" (us, ms or s)"
            ));
        }
    };
    let amount = match amount.strip_prefix(':') {
        Some(v) if valid_name(v) => SleepFor::Var(v.to_string()),
        Some(_) => return Err(format!("\\sleep: invalid variable \"{amount}\"")),
        None => SleepFor::Const(
            amount
                .parse()
                .map_err(|_| format!("\\sleep: \"{amount}\" is not an integer"))?,
        ),
    };
    Ok(Command::Sleep { amount, unit_us })
}

/// Matches each `\if` with its `\elif`s, `\else` and `\endif`, filling in the jumps.
fn link_blocks(p: &mut Program, end: Pos) -> Result<(), ScriptError> {
    // Open blocks: the index of the \if and of each branch so far.
    let mut open: Vec<Vec<usize>> = Vec::new();
    for i in 0..p.commands.len() {
        let at = Pos {
            line: p.lines[i],
            col: 1,
        };
        match &p.commands[i] {
            Command::If { .. } => open.push(vec![i]),
            Command::Elif { .. } | Command::Else { .. } => {
                let Some(block) = open.last_mut() else {
                    return Err(at.error("\\elif or \\else without a matching \\if"));
                };
                let last = block[block.len() - 1];
                if matches!(p.commands[last], Command::Else { .. }) {
                    return Err(at.error("\\elif or \\else after \\else"));
                }
                block.push(i);
            }
            Command::Endif => {
                let Some(block) = open.pop() else {
                    return Err(at.error("\\endif without a matching \\if"));
                };
                for (k, &b) in block.iter().enumerate() {
                    let next = block.get(k + 1).copied().unwrap_or(i);
                    match &mut p.commands[b] {
                        Command::If { next: n, .. } => *n = next,
                        Command::Elif {
                            next: n, end: e, ..
                        } => (*n, *e) = (next, i),
                        Command::Else { end: e } => *e = i,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err(end.error("end of script reached without closing an \\if with \\endif"));
    }
    Ok(())
}

/// Pipelines do not nest, end where they began, and hold no `\gset`/`\aset`.
fn check_pipelines(p: &Program, end: Pos) -> Result<(), ScriptError> {
    let mut inside = false;
    for (c, &line) in p.commands.iter().zip(&p.lines) {
        let at = Pos { line, col: 1 };
        match c {
            Command::StartPipeline if inside => return Err(at.error("already in a pipeline")),
            Command::StartPipeline => inside = true,
            Command::EndPipeline if !inside => {
                return Err(at.error("\\endpipeline outside a pipeline"));
            }
            Command::EndPipeline => inside = false,
            Command::Sql {
                end: SqlEnd::Gset(_) | SqlEnd::Aset(_),
                ..
            } if inside => {
                return Err(at.error("\\gset and \\aset cannot be used in pipeline mode"));
            }
            _ => {}
        }
    }
    if inside {
        return Err(end.error("end of script reached within a pipeline"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
