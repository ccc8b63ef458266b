//! A workload's options as declared once: each spec lists its [`OptionDef`]s (name as the
//! command line spells it, default, help, kind) and reads them from an [`Options`] bag.
//!
//! The same declaration drives the command line (which options exist, which are on/off
//! switches, `fleetbench TEST help`), the wire (a Start carries the bag as text, the agent
//! reads it with the same function), and the result document (the options under their
//! JSON names, typed by kind). Adding an option to such a workload touches its spec and
//! the code that uses it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::spec::SpecError;

/// What an option's value is: how it is parsed and how the result document records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative integer.
    Count,
    /// Bytes, with sysbench's suffixes (16K, 2G).
    Size,
    /// on/off (sysbench's boolean spellings; `--name` alone means on).
    Flag,
    /// A finite number.
    Float,
    /// A word or list the spec parses itself.
    Text,
}

/// One option of one workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDef {
    /// The name as the command line spells it, without the dashes (`cpu-max-prime`).
    pub name: &'static str,
    /// The value when the option is not given, as the user would write it.
    pub default: &'static str,
    pub kind: Kind,
    /// One line for `fleetbench TEST help`.
    pub help: &'static str,
    /// Other spellings the command line takes (sysbench 0.4/0.5's `oltp-table-size`);
    /// the wire and the result document use `name` only.
    pub aliases: &'static [&'static str],
}

impl OptionDef {
    pub const fn new(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        help: &'static str,
    ) -> Self {
        OptionDef {
            name,
            default,
            kind,
            help,
            aliases: &[],
        }
    }

    /// The same option, also spelt as `aliases` on the command line.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Self {
        OptionDef { aliases, ..self }
    }

    /// Whether the command line's `name` (without dashes) means this option.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// The name the result document records it under (`cpu_max_prime`).
    pub fn json_name(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// One workload's option values, every declared option present (given or default).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    defs: &'static [OptionDef],
    values: BTreeMap<&'static str, String>,
}

impl Options {
    /// The values given for `defs`, the defaults for the rest. A name `defs` does not
    /// declare is refused: on an agent it means a coordinator that plans another workload
    /// than the one it names.
    pub fn resolve<'a>(
        test: &str,
        defs: &'static [OptionDef],
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Options, SpecError> {
        let mut values: BTreeMap<&'static str, String> = defs
            .iter()
            .map(|d| (d.name, d.default.to_string()))
            .collect();
        for (name, value) in given {
            let def = defs
                .iter()
                .find(|d| d.name == name)
                .ok_or_else(|| SpecError::Options(format!("{test} has no option --{name}")))?;
            values.insert(def.name, value.to_string());
        }
        Ok(Options { defs, values })
    }

    fn def(&self, name: &str) -> &'static OptionDef {
        self.defs
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("option --{name} is not declared"))
    }

    fn invalid(&self, name: &str, why: &'static str) -> SpecError {
        SpecError::invalid(self.def(name).name, self.text(name), why)
    }

    /// The value as given (or the default).
    pub fn text(&self, name: &str) -> &str {
        &self.values[self.def(name).name]
    }

    pub fn num<T: std::str::FromStr>(&self, name: &str) -> Result<T, SpecError> {
        self.text(name)
            .trim()
            .parse()
            .map_err(|_| self.invalid(name, "not a non-negative integer"))
    }

    pub fn size(&self, name: &str) -> Result<u64, SpecError> {
        parse_size(self.text(name))
            .ok_or_else(|| self.invalid(name, "expected a size such as 16384, 16K, 100M or 2G"))
    }

    pub fn flag(&self, name: &str) -> Result<bool, SpecError> {
        parse_flag(self.text(name)).ok_or_else(|| self.invalid(name, "expected on or off"))
    }

    pub fn float(&self, name: &str) -> Result<f64, SpecError> {
        self.text(name)
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| self.invalid(name, "not a number"))
    }

    /// The value when it is one of `words`; `why` lists them for the error.
    pub fn choice(
        &self,
        name: &str,
        words: &[&'static str],
        why: &'static str,
    ) -> Result<&'static str, SpecError> {
        // Surrounding blanks (an old script's `--oltp-test-mode=" simple"`) are no part of it.
        let v = self.text(name).trim();
        words
            .iter()
            .find(|w| **w == v)
            .copied()
            .ok_or_else(|| self.invalid(name, why))
    }
}

/// Options written back as text, in the order the spec records them: what goes on the
/// wire and, typed by each option's kind, into the result document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written(pub Vec<(&'static str, String)>);

impl Written {
    pub fn put(&mut self, name: &'static str, value: impl ToString) -> &mut Self {
        self.0.push((name, value.to_string()));
        self
    }

    pub fn switch(&mut self, name: &'static str, on: bool) -> &mut Self {
        self.put(name, if on { "on" } else { "off" })
    }

    /// The options as the wire's option bag (name without dashes, value).
    pub fn into_bag(self) -> std::collections::HashMap<String, String> {
        self.0
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// The result document's fields: JSON names, values typed by `defs`' kinds.
    pub fn fields(&self, defs: &[OptionDef]) -> Vec<(String, Value)> {
        self.0
            .iter()
            .map(|(name, v)| {
                let def = defs.iter().find(|d| d.name == *name);
                let value = match def.map(|d| d.kind) {
                    Some(Kind::Count | Kind::Size) => {
                        parse_size(v).map_or(v.as_str().into(), Value::from)
                    }
                    Some(Kind::Flag) => parse_flag(v).map_or(v.as_str().into(), Value::from),
                    Some(Kind::Float) => v.parse::<f64>().map_or(v.as_str().into(), Value::from),
                    _ => v.as_str().into(),
                };
                (name.replace('-', "_"), value)
            })
            .collect()
    }
}

/// sysbench's boolean spellings.
pub fn parse_flag(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Parses a size as sysbench does: a number with an optional suffix b, k, m, g or t (any
/// case, binary multiples; `K`, `KB` and `KiB` alike).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().ok()?;
    let suffix = t[digits..].trim().to_ascii_lowercase();
    let unit = match suffix.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1u64,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[OptionDef] = &[
        OptionDef::new("a-count", Kind::Count, "7", "a count"),
        OptionDef::new("a-size", Kind::Size, "1K", "a size"),
        OptionDef::new("a-flag", Kind::Flag, "off", "a switch"),
        OptionDef::new("a-word", Kind::Text, "x", "a word"),
    ];

    #[test]
    fn defaults_fill_in_and_given_values_win() {
        let o = Options::resolve("t", DEFS, [("a-count", "9")]).unwrap();
        assert_eq!(o.num::<u32>("a-count"), Ok(9));
        assert_eq!(o.size("a-size"), Ok(1024));
        assert_eq!(o.flag("a-flag"), Ok(false));
        assert_eq!(o.choice("a-word", &["x", "y"], "x or y"), Ok("x"));
    }

    #[test]
    fn bad_values_and_unknown_names_are_refused_with_the_option_named() {
        let e = Options::resolve("t", DEFS, [("a-nope", "1")]).unwrap_err();
        assert_eq!(e.to_string(), "t has no option --a-nope");
        let o = Options::resolve("t", DEFS, [("a-count", "-1"), ("a-flag", "maybe")]).unwrap();
        assert_eq!(
            o.num::<u32>("a-count").unwrap_err().to_string(),
            "invalid value for --a-count: '-1' (not a non-negative integer)"
        );
        assert!(
            o.flag("a-flag")
                .unwrap_err()
                .to_string()
                .contains("--a-flag")
        );
        let o = Options::resolve("t", DEFS, [("a-word", "z")]).unwrap();
        assert!(o.choice("a-word", &["x", "y"], "x or y").is_err());
    }

    #[test]
    fn written_options_are_typed_by_kind_in_the_result() {
        let mut w = Written::default();
        w.put("a-count", 3)
            .put("a-size", 2048)
            .switch("a-flag", true)
            .put("a-word", "y");
        assert_eq!(
            w.fields(DEFS),
            vec![
                ("a_count".to_string(), Value::from(3)),
                ("a_size".to_string(), Value::from(2048)),
                ("a_flag".to_string(), Value::from(true)),
                ("a_word".to_string(), Value::from("y")),
            ]
        );
    }

    #[test]
    fn sizes_take_sysbench_suffixes() {
        assert_eq!(parse_size("16K"), Some(16 << 10));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1KiB"), Some(1024));
        assert_eq!(parse_size("10"), Some(10));
        assert_eq!(parse_size("1x"), None);
        assert_eq!(parse_size("99999999999T"), None);
    }
}
