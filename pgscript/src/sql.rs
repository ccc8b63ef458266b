//! An SQL command of a script: its text cut into literal pieces and `:variable`
//! references, sent with the values in the text (`-M simple`) or with `$n` parameters
//! (`-M extended` and `-M prepared`).

use std::fmt::Write;

use crate::EvalError;
use crate::value::{Value, Vars};

/// A piece of an SQL command's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Var(String),
}

/// pgbench's bound on the variables one command uses.
pub const MAX_VARS: usize = 255;

/// An SQL command as the script has it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SqlText {
    pub pieces: Vec<Piece>,
    /// Statements in the command (`\;` joins several into one; simple mode only).
    pub statements: usize,
}

impl SqlText {
    /// The command with its `:variables` as written.
    pub fn source(&self) -> String {
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => s.push_str(l),
                Piece::Var(v) => {
                    s.push(':');
                    s.push_str(v);
                }
            }
        }
        s
    }

    /// The distinct variables in order of first use: the `$n` parameters.
    pub fn params(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.pieces {
            if let Piece::Var(v) = p
                && !out.contains(v)
            {
                out.push(v.clone());
            }
        }
        out
    }

    /// The command with `$n` for its variables ([`Self::params`]'s order).
    pub fn numbered(&self) -> String {
        let params = self.params();
        let mut s = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => s.push_str(l),
                Piece::Var(v) => {
                    let n = params.iter().position(|x| x == v).unwrap_or(0) + 1;
                    let _ = write!(s, "${n}");
                }
            }
        }
        s
    }

    /// The command with the values in its text, into `out` (cleared first). A variable
    /// that is not set stays `:name`, as pgbench leaves it.
    pub fn render(&self, vars: &Vars, out: &mut String) {
        out.clear();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => out.push_str(l),
                Piece::Var(v) => match vars.get(v) {
                    Some(val) => {
                        let _ = write!(out, "{val}");
                    }
                    None => {
                        out.push(':');
                        out.push_str(v);
                    }
                },
            }
        }
    }

    /// The parameters' values, in `$n` order; a variable that is not set is an error.
    pub fn values<'v>(
        &self,
        vars: &'v Vars,
        names: &[String],
    ) -> Result<Vec<&'v Value>, EvalError> {
        names.iter().map(|n| vars.lookup(n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SqlText {
        SqlText {
            pieces: vec![
                Piece::Lit("UPDATE t SET v = v + ".into()),
                Piece::Var("delta".into()),
                Piece::Lit(" WHERE id = ".into()),
                Piece::Var("aid".into()),
                Piece::Lit(" OR id = ".into()),
                Piece::Var("delta".into()),
                Piece::Lit(";".into()),
            ],
            statements: 1,
        }
    }

    #[test]
    fn variables_become_numbered_parameters() {
        let s = sample();
        assert_eq!(s.params(), vec!["delta".to_string(), "aid".to_string()]);
        assert_eq!(
            s.numbered(),
            "UPDATE t SET v = v + $1 WHERE id = $2 OR id = $1;"
        );
        assert_eq!(
            s.source(),
            "UPDATE t SET v = v + :delta WHERE id = :aid OR id = :delta;"
        );
    }

    #[test]
    fn simple_mode_writes_the_values_and_leaves_unknown_names() {
        let mut v = Vars::default();
        v.set("delta", Value::Int(-3));
        let mut out = String::new();
        sample().render(&v, &mut out);
        assert_eq!(out, "UPDATE t SET v = v + -3 WHERE id = :aid OR id = -3;");
        let names = sample().params();
        assert!(sample().values(&v, &names).is_err());
        v.set("aid", Value::Text("17".into()));
        let vals = sample().values(&v, &names).unwrap();
        assert_eq!(vals[1], &Value::Text("17".into()));
    }
}
