//! A script variable's value and a client's variables. Values from `-D` and from query
//! results (`\gset`, `\aset`) arrive as text and are read as numbers when an expression
//! uses them, as pgbench does.

use std::collections::HashMap;
use std::fmt;

use crate::EvalError;

/// A value of the expression language, or text from outside it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    Text(String),
}

/// A number as an expression uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Double(f64),
}

impl Value {
    /// The value as a number: text is read as an integer or a double; NULL is None.
    pub fn num(&self) -> Result<Option<Num>, EvalError> {
        match self {
            Value::Null => Ok(None),
            Value::Int(i) => Ok(Some(Num::Int(*i))),
            Value::Double(d) => Ok(Some(Num::Double(*d))),
            Value::Bool(_) => Err(EvalError::new("cannot coerce boolean to a number")),
            Value::Text(t) => parse_number(t).map(Some).ok_or_else(|| {
                EvalError::new(format!("malformed variable value \"{t}\": not a number"))
            }),
        }
    }

    /// The value as an integer (doubles are truncated when they fit).
    pub fn int(&self) -> Result<Option<i64>, EvalError> {
        Ok(match self.num()? {
            None => None,
            Some(Num::Int(i)) => Some(i),
            Some(Num::Double(d)) => Some(double_to_int(d)?),
        })
    }

    /// The value as a double.
    pub fn double(&self) -> Result<Option<f64>, EvalError> {
        Ok(self.num()?.map(|n| match n {
            Num::Int(i) => i as f64,
            Num::Double(d) => d,
        }))
    }

    /// The value as a condition: non-zero numbers and TRUE are true; zero, FALSE and NULL
    /// are false.
    pub fn truth(&self) -> Result<bool, EvalError> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::Null => Ok(false),
            Value::Text(t) if t.eq_ignore_ascii_case("true") => Ok(true),
            Value::Text(t) if t.eq_ignore_ascii_case("false") => Ok(false),
            other => Ok(match other.num()? {
                Some(Num::Int(i)) => i != 0,
                Some(Num::Double(d)) => d != 0.0,
                None => false,
            }),
        }
    }
}

impl From<Num> for Value {
    fn from(n: Num) -> Value {
        match n {
            Num::Int(i) => Value::Int(i),
            Num::Double(d) => Value::Double(d),
        }
    }
}

/// How a value is written into SQL text or sent as a parameter.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => Ok(()),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d:?}"),
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// An integer or a double literal, with surrounding spaces allowed.
pub fn parse_number(t: &str) -> Option<Num> {
    let t = t.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Some(Num::Int(i));
    }
    let looks_numeric = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if looks_numeric && t.bytes().any(|b| b.is_ascii_digit()) {
        return t.parse::<f64>().ok().map(Num::Double);
    }
    None
}

/// A double as an integer, refused when out of range (or NaN).
pub fn double_to_int(d: f64) -> Result<i64, EvalError> {
    let t = d.trunc();
    // i64's range as doubles: [-2^63, 2^63).
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if t.is_nan() || !(-LIMIT..LIMIT).contains(&t) {
        return Err(EvalError::new("double to int overflow"));
    }
    Ok(t as i64)
}

/// Whether `name` is a variable name: letters (any script's), digits and underscores,
/// not starting with a digit.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// One client's variables.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    map: HashMap<String, Value>,
}

impl Vars {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    pub fn set(&mut self, name: &str, v: Value) {
        match self.map.get_mut(name) {
            Some(slot) => *slot = v,
            None => {
                self.map.insert(name.to_string(), v);
            }
        }
    }

    /// Sets `name` unless it is set already (the automatic variables yield to `-D`).
    pub fn preset(&mut self, name: &str, v: Value) {
        self.map.entry(name.to_string()).or_insert(v);
    }

    /// A variable an expression reads: an error names it when it is not set.
    pub fn lookup(&self, name: &str) -> Result<&Value, EvalError> {
        self.map
            .get(name)
            .ok_or_else(|| EvalError::new(format!("undefined variable \"{name}\"")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_read_as_a_number_when_used() {
        assert_eq!(Value::Text("42".into()).int().unwrap(), Some(42));
        assert_eq!(Value::Text(" 2.5 ".into()).double().unwrap(), Some(2.5));
        assert_eq!(Value::Text("2.9".into()).int().unwrap(), Some(2));
        assert!(Value::Text("abc".into()).num().is_err());
        assert_eq!(Value::Null.int().unwrap(), None);
        assert!(Value::Bool(true).int().is_err());
    }

    #[test]
    fn conditions_follow_pgbench() {
        assert!(Value::Int(3).truth().unwrap());
        assert!(!Value::Int(0).truth().unwrap());
        assert!(!Value::Null.truth().unwrap());
        assert!(!Value::Double(0.0).truth().unwrap());
        assert!(Value::Bool(true).truth().unwrap());
    }

    #[test]
    fn values_print_as_sql_literals() {
        assert_eq!(Value::Int(-5).to_string(), "-5");
        assert_eq!(Value::Double(1.0).to_string(), "1.0");
        assert_eq!(Value::Double(2.5).to_string(), "2.5");
        assert_eq!(Value::Bool(false).to_string(), "false");
        assert_eq!(Value::Text("x y".into()).to_string(), "x y");
    }

    #[test]
    fn names_are_letters_digits_and_underscores() {
        assert!(valid_name("aid"));
        assert!(valid_name("_x1"));
        assert!(valid_name("größe"));
        assert!(!valid_name("1x"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name(""));
    }

    #[test]
    fn presets_yield_to_values_already_set() {
        let mut v = Vars::default();
        v.set("scale", Value::Text("7".into()));
        v.preset("scale", Value::Int(1));
        v.preset("client_id", Value::Int(3));
        assert_eq!(v.get("scale"), Some(&Value::Text("7".into())));
        assert_eq!(v.get("client_id"), Some(&Value::Int(3)));
        assert!(v.lookup("nope").unwrap_err().0.contains("\"nope\""));
    }
}
