//! The expression language of `\set` and `\if`: constants, `:variables`, operators with
//! SQL's precedence (OR, AND, NOT, IS tests, comparisons, bitwise, additive,
//! multiplicative, unary), function calls, `CASE WHEN ... END` and parentheses. Parsed
//! once per script into an [`Expr`]; evaluated per use over a client's variables.

use crate::EvalError;
pub use crate::env::Env;
use crate::func::{self, Func};
use crate::value::{Num, Value, valid_name};

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `IS [NOT] NULL|TRUE|FALSE`, `ISNULL`, `NOTNULL`: what is tested and whether the
    /// answer is negated.
    Is(Box<Expr>, IsWhat, bool),
    Call(Func, Vec<Expr>),
    /// WHEN/THEN pairs and the ELSE (NULL without one).
    Case(Vec<(Expr, Expr)>, Option<Box<Expr>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    BitNot,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsWhat {
    Null,
    True,
    False,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A mistake in an expression: where (a character offset into its text) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Double(f64),
    Var(String),
    Word(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

/// Splits `s` into tokens, each with its character offset.
fn lex(s: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |offset, m: &str| ParseError {
        offset,
        message: m.to_string(),
    };
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let (tok, end) = number(&chars, i).map_err(|m| err(start, &m))?;
            out.push((tok, start));
            i = end;
            continue;
        }
        if c == ':' {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            if !valid_name(&name) {
                return Err(err(start, "a variable name must follow ':'"));
            }
            out.push((Tok::Var(name), start));
            i = j;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            out.push((Tok::Word(chars[i..j].iter().collect()), start));
            i = j;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let op = ["<=", ">=", "<>", "!=", "<<", ">>"]
            .into_iter()
            .find(|o| *o == two);
        let tok = match (op, c) {
            (Some(o), _) => Tok::Op(o),
            (None, '(') => Tok::LParen,
            (None, ')') => Tok::RParen,
            (None, ',') => Tok::Comma,
            (None, _) => match "+-*/%=<>|#&~".find(c) {
                Some(k) => Tok::Op(["+", "-", "*", "/", "%", "=", "<", ">", "|", "#", "&", "~"][k]),
                None => return Err(err(start, &format!("unexpected character \"{c}\""))),
            },
        };
        i += op.map_or(1, |_| 2);
        out.push((tok, start));
    }
    Ok(out)
}

/// A numeric literal at `i`: an integer, or a double with a point or an exponent.
fn number(chars: &[char], mut i: usize) -> Result<(Tok, usize), String> {
    let start = i;
    let digits = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    digits(&mut i);
    let mut double = false;
    if i < chars.len() && chars[i] == '.' {
        double = true;
        i += 1;
        digits(&mut i);
    }
    if i < chars.len() && matches!(chars[i], 'e' | 'E') {
        let mut j = i + 1;
        if j < chars.len() && matches!(chars[j], '+' | '-') {
            j += 1;
        }
        if j < chars.len() && chars[j].is_ascii_digit() {
            double = true;
            i = j;
            digits(&mut i);
        }
    }
    let text: String = chars[start..i].iter().collect();
    if double {
        let d: f64 = text
            .parse()
            .map_err(|_| format!("invalid number \"{text}\""))?;
        if !d.is_finite() {
            return Err(format!("double constant out of range: \"{text}\""));
        }
        return Ok((Tok::Double(d), i));
    }
    let v: i128 = text
        .parse()
        .map_err(|_| format!("bigint constant out of range: \"{text}\""))?;
    if v > i128::from(i64::MAX) + 1 {
        return Err(format!("bigint constant out of range: \"{text}\""));
    }
    Ok((Tok::Int(v), i))
}

/// Parses `s` as one whole expression.
pub fn parse(s: &str) -> Result<Expr, ParseError> {
    let toks = lex(s)?;
    let mut p = Parser {
        toks,
        pos: 0,
        end: s.chars().count(),
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(p.error("syntax error: unexpected text after the expression"));
    }
    Ok(e)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    /// The text's length: where "unexpected end" points.
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn error(&self, m: &str) -> ParseError {
        ParseError {
            offset: self.toks.get(self.pos).map_or(self.end, |(_, o)| *o),
            message: m.to_string(),
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.is_word(w);
        self.pos += usize::from(yes);
        yes
    }

    fn eat_op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        match self.peek() {
            Some(Tok::Op(o)) if ops.contains(o) => {
                let o = *o;
                self.pos += 1;
                Some(o)
            }
            _ => None,
        }
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let l = self.and()?;
        if self.eat_word("or") {
            let r = self.or()?;
            return Ok(Expr::Binary(BinOp::Or, Box::new(l), Box::new(r)));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let l = self.not()?;
        if self.eat_word("and") {
            let r = self.and()?;
            return Ok(Expr::Binary(BinOp::And, Box::new(l), Box::new(r)));
        }
        Ok(l)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.eat_word("not") {
            return Ok(Expr::Unary(UnOp::Not, Box::new(self.not()?)));
        }
        self.is_test()
    }

    fn is_test(&mut self) -> Result<Expr, ParseError> {
        let e = self.comparison()?;
        if self.eat_word("isnull") {
            return Ok(Expr::Is(Box::new(e), IsWhat::Null, false));
        }
        if self.eat_word("notnull") {
            return Ok(Expr::Is(Box::new(e), IsWhat::Null, true));
        }
        if self.eat_word("is") {
            let negated = self.eat_word("not");
            let what = if self.eat_word("null") {
                IsWhat::Null
            } else if self.eat_word("true") {
                IsWhat::True
            } else if self.eat_word("false") {
                IsWhat::False
            } else {
                return Err(self.error("syntax error: IS takes NULL, TRUE or FALSE"));
            };
            return Ok(Expr::Is(Box::new(e), what, negated));
        }
        Ok(e)
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let l = self.bitwise()?;
        let Some(o) = self.eat_op(&["=", "<>", "!=", "<", "<=", ">", ">="]) else {
            return Ok(l);
        };
        let op = match o {
            "=" => BinOp::Eq,
            "<>" | "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            _ => BinOp::Ge,
        };
        let r = self.bitwise()?;
        Ok(Expr::Binary(op, Box::new(l), Box::new(r)))
    }

    /// One level of left-associative binary operators.
    fn left(
        &mut self,
        ops: &[(&'static str, BinOp)],
        next: fn(&mut Parser) -> Result<Expr, ParseError>,
    ) -> Result<Expr, ParseError> {
        let mut l = next(self)?;
        let names: Vec<&'static str> = ops.iter().map(|(n, _)| *n).collect();
        while let Some(o) = self.eat_op(&names) {
            let op = ops.iter().find(|(n, _)| *n == o).map(|(_, b)| *b);
            let r = next(self)?;
            l = Expr::Binary(op.unwrap_or(BinOp::Add), Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn bitwise(&mut self) -> Result<Expr, ParseError> {
        use BinOp::*;
        let ops = [
            ("|", BitOr),
            ("#", BitXor),
            ("&", BitAnd),
            ("<<", Shl),
            (">>", Shr),
        ];
        self.left(&ops, Parser::additive)
    }

    fn additive(&mut self) -> Result<Expr, ParseError> {
        self.left(
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            Parser::multiplicative,
        )
    }

    fn multiplicative(&mut self) -> Result<Expr, ParseError> {
        let ops = [("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)];
        self.left(&ops, Parser::unary)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat_op(&["+"]).is_some() {
            return self.unary();
        }
        if self.eat_op(&["-"]).is_some() {
            // -9223372036854775808 is a constant, not the negation of one out of range.
            if let Some(Tok::Int(v)) = self.peek() {
                let v = -*v;
                self.pos += 1;
                return Ok(Expr::Const(Value::Int(v as i64)));
            }
            return Ok(Expr::Unary(UnOp::Neg, Box::new(self.unary()?)));
        }
        if self.eat_op(&["~"]).is_some() {
            return Ok(Expr::Unary(UnOp::BitNot, Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let Some((tok, _)) = self.toks.get(self.pos).cloned() else {
            return Err(self.error("syntax error: unexpected end of expression"));
        };
        match tok {
            Tok::Int(v) if v > i128::from(i64::MAX) => {
                Err(self.error("bigint constant out of range"))
            }
            Tok::Int(v) => {
                self.pos += 1;
                Ok(Expr::Const(Value::Int(v as i64)))
            }
            Tok::Double(d) => {
                self.pos += 1;
                Ok(Expr::Const(Value::Double(d)))
            }
            Tok::Var(name) => {
                self.pos += 1;
                Ok(Expr::Var(name))
            }
            Tok::LParen => {
                self.pos += 1;
                let e = self.or()?;
                self.expect(Tok::RParen, "\")\"")?;
                Ok(e)
            }
            Tok::Word(w) => self.word(&w),
            _ => Err(self.error("syntax error: an operand is missing")),
        }
    }

    fn expect(&mut self, t: Tok, what: &str) -> Result<(), ParseError> {
        if self.peek() == Some(&t) {
            self.pos += 1;
            return Ok(());
        }
        Err(self.error(&format!("syntax error: {what} expected")))
    }

    /// A keyword constant, CASE, or a function call.
    fn word(&mut self, w: &str) -> Result<Expr, ParseError> {
        let lower = w.to_ascii_lowercase();
        let constant = match lower.as_str() {
            "null" => Some(Value::Null),
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        };
        if let Some(c) = constant {
            self.pos += 1;
            return Ok(Expr::Const(c));
        }
        if lower == "case" {
            self.pos += 1;
            return self.case();
        }
        let Some(f) = Func::by_name(&lower) else {
            return Err(self.error(&format!("unexpected word \"{w}\" (not a function)")));
        };
        let at = self.pos;
        self.pos += 1;
        self.expect(Tok::LParen, "\"(\" after the function's name")?;
        let mut args = Vec::new();
        if self.peek() != Some(&Tok::RParen) {
            loop {
                args.push(self.or()?);
                if self.peek() != Some(&Tok::Comma) {
                    break;
                }
                self.pos += 1;
            }
        }
        self.expect(Tok::RParen, "\")\"")?;
        if !f.arity_ok(args.len()) {
            self.pos = at;
            return Err(self.error(&format!(
                "wrong number of arguments for function \"{}\"",
                f.name()
            )));
        }
        Ok(Expr::Call(f, args))
    }

    fn case(&mut self) -> Result<Expr, ParseError> {
        let mut arms = Vec::new();
        while self.eat_word("when") {
            let cond = self.or()?;
            if !self.eat_word("then") {
                return Err(self.error("syntax error: THEN expected"));
            }
            arms.push((cond, self.or()?));
        }
        if arms.is_empty() {
            return Err(self.error("syntax error: CASE needs WHEN"));
        }
        let other = if self.eat_word("else") {
            Some(Box::new(self.or()?))
        } else {
            None
        };
        if !self.eat_word("end") {
            return Err(self.error("syntax error: END expected"));
        }
        Ok(Expr::Case(arms, other))
    }
}

impl Expr {
    /// Whether the expression reads variable `name`.
    pub fn reads(&self, name: &str) -> bool {
        match self {
            Expr::Const(_) => false,
            Expr::Var(v) => v == name,
            Expr::Unary(_, e) | Expr::Is(e, _, _) => e.reads(name),
            Expr::Binary(_, l, r) => l.reads(name) || r.reads(name),
            Expr::Call(_, args) => args.iter().any(|a| a.reads(name)),
            Expr::Case(arms, other) => {
                arms.iter().any(|(c, t)| c.reads(name) || t.reads(name))
                    || other.as_ref().is_some_and(|e| e.reads(name))
            }
        }
    }

    /// The expression's value for one client now.
    pub fn eval(&self, env: &mut Env<'_>) -> Result<Value, EvalError> {
        match self {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Var(name) => env.vars.lookup(name).cloned(),
            Expr::Unary(op, e) => unary(*op, e.eval(env)?),
            Expr::Binary(BinOp::And, l, r) => {
                let l = l.eval(env)?;
                if l != Value::Null && !l.truth()? {
                    return Ok(Value::Bool(false));
                }
                let r = r.eval(env)?;
                logic(l, r, false)
            }
            Expr::Binary(BinOp::Or, l, r) => {
                let l = l.eval(env)?;
                if l != Value::Null && l.truth()? {
                    return Ok(Value::Bool(true));
                }
                let r = r.eval(env)?;
                logic(l, r, true)
            }
            Expr::Binary(op, l, r) => binary(*op, l.eval(env)?, r.eval(env)?),
            Expr::Is(e, what, negated) => {
                let v = e.eval(env)?;
                let yes = match what {
                    IsWhat::Null => v == Value::Null,
                    IsWhat::True => v != Value::Null && v.truth()?,
                    IsWhat::False => v != Value::Null && !v.truth()?,
                };
                Ok(Value::Bool(yes != *negated))
            }
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval(env)?);
                }
                func::call(*f, &vals, env)
            }
            Expr::Case(arms, other) => {
                for (cond, then) in arms {
                    if cond.eval(env)?.truth()? {
                        return then.eval(env);
                    }
                }
                other.as_ref().map_or(Ok(Value::Null), |e| e.eval(env))
            }
        }
    }
}

/// AND (`or` false) or OR of two values after the short cut did not apply: SQL's
/// three-valued logic.
fn logic(l: Value, r: Value, or: bool) -> Result<Value, EvalError> {
    if r != Value::Null && r.truth()? == or {
        return Ok(Value::Bool(or));
    }
    if l == Value::Null || r == Value::Null {
        return Ok(Value::Null);
    }
    Ok(Value::Bool(!or))
}

fn unary(op: UnOp, v: Value) -> Result<Value, EvalError> {
    if v == Value::Null {
        return Ok(Value::Null);
    }
    match op {
        UnOp::Not => Ok(Value::Bool(!v.truth()?)),
        UnOp::BitNot => Ok(Value::Int(!int_of(&v)?)),
        UnOp::Neg => match v.num()? {
            Some(Num::Int(i)) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| EvalError::new("bigint out of range")),
            Some(Num::Double(d)) => Ok(Value::Double(-d)),
            None => Ok(Value::Null),
        },
    }
}

fn int_of(v: &Value) -> Result<i64, EvalError> {
    match v.num()? {
        Some(Num::Int(i)) => Ok(i),
        Some(Num::Double(_)) => Err(EvalError::new("cannot use a double as an integer here")),
        None => Err(EvalError::new("unexpected NULL")),
    }
}

fn binary(op: BinOp, l: Value, r: Value) -> Result<Value, EvalError> {
    use BinOp::*;
    if l == Value::Null || r == Value::Null {
        return Ok(Value::Null);
    }
    let overflow = || EvalError::new("bigint out of range");
    match op {
        BitOr | BitXor | BitAnd | Shl | Shr | Mod => {
            let (a, b) = (int_of(&l)?, int_of(&r)?);
            let v = match op {
                BitOr => a | b,
                BitXor => a ^ b,
                BitAnd => a & b,
                Shl => a.wrapping_shl(b as u32),
                Shr => a.wrapping_shr(b as u32),
                _ if b == 0 => return Err(EvalError::new("division by zero")),
                // i64::MIN % -1 is 0, not an overflow.
                _ => a.checked_rem(b).unwrap_or(0),
            };
            return Ok(Value::Int(v));
        }
        _ => {}
    }
    let (a, b) = match (l.num()?, r.num()?) {
        (Some(a), Some(b)) => (a, b),
        _ => return Ok(Value::Null),
    };
    if let (Num::Int(a), Num::Int(b)) = (a, b) {
        let v = match op {
            Add => a.checked_add(b).ok_or_else(overflow)?,
            Sub => a.checked_sub(b).ok_or_else(overflow)?,
            Mul => a.checked_mul(b).ok_or_else(overflow)?,
            Div if b == 0 => return Err(EvalError::new("division by zero")),
            Div => a.checked_div(b).ok_or_else(overflow)?,
            _ => return Ok(Value::Bool(compare(op, a.cmp(&b)))),
        };
        return Ok(Value::Int(v));
    }
    let f = |n: Num| match n {
        Num::Int(i) => i as f64,
        Num::Double(d) => d,
    };
    let (a, b) = (f(a), f(b));
    Ok(match op {
        Add => Value::Double(a + b),
        Sub => Value::Double(a - b),
        Mul => Value::Double(a * b),
        Div if b == 0.0 => return Err(EvalError::new("division by zero")),
        Div => Value::Double(a / b),
        _ => match a.partial_cmp(&b) {
            Some(o) => Value::Bool(compare(op, o)),
            None => Value::Bool(op == Ne),
        },
    })
}

fn compare(op: BinOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        _ => o != Less,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Random;
    use crate::value::Vars;

    struct Counter(u64);
    impl Random for Counter {
        fn next_u64(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0
        }
    }

    fn eval_with(s: &str, vars: &Vars) -> Result<Value, EvalError> {
        let e = parse(s).map_err(|e| EvalError::new(e.message))?;
        let mut rng = Counter(7);
        e.eval(&mut Env {
            vars,
            rng: &mut rng,
            default_seed: 5432,
        })
    }

    fn ev(s: &str) -> Value {
        eval_with(s, &Vars::default()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn the_documented_operator_examples_hold() {
        let cases = [
            ("5 or 0", Value::Bool(true)),
            ("3 and 0", Value::Bool(false)),
            ("not false", Value::Bool(true)),
            ("1 is null", Value::Bool(false)),
            ("1 notnull", Value::Bool(true)),
            ("5 = 4", Value::Bool(false)),
            ("5 <> 4", Value::Bool(true)),
            ("5 != 5", Value::Bool(false)),
            ("5 <= 4", Value::Bool(false)),
            ("5 >= 4", Value::Bool(true)),
            ("1 | 2", Value::Int(3)),
            ("1 # 3", Value::Int(2)),
            ("5 & 3", Value::Int(1)),
            ("~ 5", Value::Int(-6)),
            ("1 << 2", Value::Int(4)),
            ("8 >> 2", Value::Int(2)),
            ("5 + 4", Value::Int(9)),
            ("3 - 2.0", Value::Double(1.0)),
            ("5 * 4", Value::Int(20)),
            ("5 / 3", Value::Int(1)),
            ("3 % 2", Value::Int(1)),
            ("- 2.0", Value::Double(-2.0)),
        ];
        for (s, want) in cases {
            assert_eq!(ev(s), want, "{s}");
        }
    }

    #[test]
    fn precedence_is_sqls() {
        assert_eq!(ev("1 + 2 * 3"), Value::Int(7));
        assert_eq!(ev("(1 + 2) * 3"), Value::Int(9));
        assert_eq!(ev("1 + 2 = 3 and 2 < 1 or true"), Value::Bool(true));
        assert_eq!(ev("not 1 = 2"), Value::Bool(true));
        assert_eq!(ev("- 2 * 3"), Value::Int(-6));
        assert_eq!(ev("1 | 2 + 4"), Value::Int(7));
        assert_eq!(ev("10 - 4 - 3"), Value::Int(3));
        assert_eq!(ev("-9223372036854775808"), Value::Int(i64::MIN));
    }

    #[test]
    fn variables_case_and_nulls() {
        let mut v = Vars::default();
        v.set("x", Value::Int(0));
        v.set("y", Value::Text("10".into()));
        let divx = "CASE WHEN :x <> 0 THEN :y/:x ELSE NULL END";
        assert_eq!(eval_with(divx, &v).unwrap(), Value::Null);
        v.set("x", Value::Int(3));
        assert_eq!(eval_with(divx, &v).unwrap(), Value::Int(3));
        assert_eq!(
            eval_with("CASE WHEN false THEN 1 END", &v).unwrap(),
            Value::Null
        );
        assert_eq!(eval_with("null + 1", &v).unwrap(), Value::Null);
        assert_eq!(eval_with("null or true", &v).unwrap(), Value::Bool(true));
        assert_eq!(eval_with("null and true", &v).unwrap(), Value::Null);
        assert!(eval_with(":nope + 1", &v).unwrap_err().0.contains("nope"));
    }

    #[test]
    fn overflows_and_zero_divisions_are_errors() {
        let v = Vars::default();
        assert!(eval_with("9223372036854775807 + 1", &v).is_err());
        assert!(eval_with("1 / 0", &v).is_err());
        assert!(eval_with("1 % 0", &v).is_err());
        assert!(eval_with("-9223372036854775808 / -1", &v).is_err());
        assert_eq!(ev("-9223372036854775808 % -1"), Value::Int(0));
        assert!(parse("9223372036854775808").is_err());
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = parse("random(1, 10").unwrap_err();
        assert_eq!(e.offset, 12, "{e:?}");
        let e = parse("1 + * 2").unwrap_err();
        assert_eq!(e.offset, 4, "{e:?}");
        let e = parse("nosuch(1)").unwrap_err();
        assert!(e.message.contains("nosuch"), "{e:?}");
        let e = parse("random(1)").unwrap_err();
        assert!(e.message.contains("wrong number of arguments"), "{e:?}");
        assert!(parse("1 2").is_err());
        assert!(parse("").is_err());
        assert!(parse("1 is 2").is_err());
    }

    #[test]
    fn the_documented_function_examples_hold() {
        assert_eq!(ev("abs(-17)"), Value::Int(17));
        assert_eq!(ev("debug(5432.1)"), Value::Double(5432.1));
        assert_eq!(ev("double(5432)"), Value::Double(5432.0));
        assert_eq!(ev("exp(1.0)"), Value::Double(std::f64::consts::E));
        assert_eq!(ev("greatest(5, 4, 3, 2)"), Value::Int(5));
        assert_eq!(ev("hash(10, 5432)"), Value::Int(-5817877081768721676));
        assert_eq!(ev("hash_fnv1a(10, 5432)"), Value::Int(-7793829335365542153));
        assert_eq!(ev("int(5.4 + 3.8)"), Value::Int(9));
        assert_eq!(ev("least(5, 4, 3, 2.1)"), Value::Double(2.1));
        assert_eq!(ev("ln(2.718281828459045)"), Value::Double(1.0));
        assert_eq!(ev("mod(54, 32)"), Value::Int(22));
        assert_eq!(ev("pow(2.0, 10)"), Value::Double(1024.0));
        assert_eq!(ev("power(2.0, 10)"), Value::Double(1024.0));
        assert_eq!(ev("sqrt(4)"), Value::Double(2.0));
        assert_eq!(ev("PI()"), Value::Double(std::f64::consts::PI));
        let p = ev("permute(0, 4)");
        assert!(matches!(p, Value::Int(0..=3)), "{p:?}");
    }
}
