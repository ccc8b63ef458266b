//! A script's own options (`sysbench.cmdline.options`): their declarations as the script
//! makes them, the values a command line gives them (typed by the declaration, as sysbench
//! types them), and `SCRIPT help`. Pure functions; the state reads the declarations.

use std::fmt::Write as _;

/// An option's type: from its default (boolean, number, string, table) or a forced
/// `sysbench.cmdline.ARG_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    Bool,
    Int,
    Size,
    Double,
    String,
    List,
    File,
}

impl OptKind {
    /// sysbench.cmdline.ARG_* numbers (NULL is 0).
    pub fn from_arg(n: i64) -> Option<OptKind> {
        Some(match n {
            1 => OptKind::Bool,
            2 => OptKind::Int,
            3 => OptKind::Size,
            4 => OptKind::Double,
            5 => OptKind::String,
            6 => OptKind::List,
            7 => OptKind::File,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            OptKind::Bool => "bool",
            OptKind::Int => "int",
            OptKind::Size => "size",
            OptKind::Double => "double",
            OptKind::String => "string",
            OptKind::List => "list",
            OptKind::File => "file",
        }
    }

    pub fn from_name(s: &str) -> Option<OptKind> {
        [
            OptKind::Bool,
            OptKind::Int,
            OptKind::Size,
            OptKind::Double,
            OptKind::String,
            OptKind::List,
            OptKind::File,
        ]
        .into_iter()
        .find(|k| k.name() == s)
    }

    /// How `help` shows the value after `--name`.
    fn placeholder(self) -> &'static str {
        match self {
            OptKind::Bool => "[=on|off]",
            OptKind::Int | OptKind::Double => "=N",
            OptKind::Size => "=SIZE",
            OptKind::String => "=STRING",
            OptKind::List => "=[LIST,...]",
            OptKind::File => "=FILENAME",
        }
    }
}

/// One declared option.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOption {
    /// With underscores (`table_size`), as `sysbench.opt` names it.
    pub name: String,
    pub description: String,
    pub kind: OptKind,
    /// The default as text in the option's own syntax (`on`, `10000`, `a,b`); None: nil.
    pub default: Option<String>,
}

/// An option's value for a run: what the scripts' states put in `sysbench.opt`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptValue {
    pub name: String,
    pub kind: OptKind,
    /// Checked text in the option's syntax; None: nil.
    pub text: Option<String>,
}

/// The canonical name of an option as given on a command line (`--table-size` and
/// `--table_size` are one option).
pub fn canonical(name: &str) -> String {
    name.trim_start_matches('-').replace('-', "_")
}

/// sysbench's booleans.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// A size with an optional K, M, G or T suffix, in bytes.
pub fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 1u64 << 10),
        'M' => (&v[..v.len() - 1], 1 << 20),
        'G' => (&v[..v.len() - 1], 1 << 30),
        'T' => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// Checks `value` against `kind`, and gives its canonical text.
pub fn check(kind: OptKind, value: &str) -> Result<String, &'static str> {
    Ok(match kind {
        OptKind::Bool => {
            if parse_bool(value).ok_or("expected on or off")? {
                "on".into()
            } else {
                "off".into()
            }
        }
        OptKind::Int => value
            .trim()
            .parse::<i64>()
            .map_err(|_| "expected a whole number")?
            .to_string(),
        OptKind::Size => parse_size(value)
            .ok_or("expected a size such as 16K or 2G")?
            .to_string(),
        OptKind::Double => {
            value
                .trim()
                .parse::<f64>()
                .map_err(|_| "expected a number")?;
            value.trim().to_string()
        }
        OptKind::String | OptKind::File | OptKind::List => value.to_string(),
    })
}

/// Why a command line's script options cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    #[error("invalid value for --{name}: '{value}' ({why})")]
    Invalid {
        name: String,
        value: String,
        why: &'static str,
    },
}

/// The values of every declared option: the given one (the last, if given twice) or the
/// default. `given` holds canonical names; names not declared are the caller's to refuse.
pub fn resolve(
    declared: &[ScriptOption],
    given: &[(String, String)],
) -> Result<Vec<OptValue>, OptionError> {
    declared
        .iter()
        .map(|d| {
            let text = match given.iter().rev().find(|(n, _)| *n == d.name) {
                Some((_, v)) => Some(check(d.kind, v).map_err(|why| OptionError::Invalid {
                    name: d.name.clone(),
                    value: v.clone(),
                    why,
                })?),
                None => d.default.clone(),
            };
            Ok(OptValue {
                name: d.name.clone(),
                kind: d.kind,
                text,
            })
        })
        .collect()
}

/// `SCRIPT help`: the script's options, sorted, with their defaults (sysbench's layout).
pub fn help(script: &str, declared: &[ScriptOption]) -> String {
    let mut out = String::new();
    if declared.is_empty() {
        let _ = writeln!(out, "{script} has no options of its own.");
        return out;
    }
    let _ = writeln!(out, "{script} options:");
    let mut sorted: Vec<&ScriptOption> = declared.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for o in sorted {
        let flag = format!("--{}{}", o.name, o.kind.placeholder());
        let default = match &o.default {
            Some(d) if !d.is_empty() => format!(" [{d}]"),
            _ => String::new(),
        };
        let _ = writeln!(out, "  {flag:<32}{}{default}", o.description);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(name: &str, kind: OptKind, default: Option<&str>) -> ScriptOption {
        ScriptOption {
            name: name.into(),
            description: format!("the {name}"),
            kind,
            default: default.map(Into::into),
        }
    }

    #[test]
    fn values_are_typed_by_the_declaration_and_the_last_given_wins() {
        let declared = [
            opt("table_size", OptKind::Int, Some("10000")),
            opt("auto_inc", OptKind::Bool, Some("on")),
            opt("buf", OptKind::Size, Some("1024")),
            opt("variant", OptKind::String, None),
        ];
        let given = vec![
            ("table_size".to_string(), "5".to_string()),
            ("auto_inc".into(), "no".into()),
            ("table_size".into(), "7".into()),
            ("buf".into(), "2K".into()),
        ];
        let v = resolve(&declared, &given).unwrap();
        assert_eq!(v[0].text.as_deref(), Some("7"));
        assert_eq!(v[1].text.as_deref(), Some("off"));
        assert_eq!(v[2].text.as_deref(), Some("2048"));
        assert_eq!(v[3].text, None);
        let bad = resolve(&declared, &[("table_size".into(), "many".into())]).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "invalid value for --table_size: 'many' (expected a whole number)"
        );
    }

    #[test]
    fn canonical_names_treat_dashes_as_underscores() {
        assert_eq!(canonical("--table-size"), "table_size");
        assert_eq!(canonical("table_size"), "table_size");
    }

    #[test]
    fn help_lists_options_sorted_with_their_defaults() {
        let h = help(
            "t.lua",
            &[
                opt("tables", OptKind::Int, Some("1")),
                opt("auto_inc", OptKind::Bool, Some("on")),
            ],
        );
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "t.lua options:");
        assert!(lines[1].starts_with("  --auto_inc[=on|off]"), "{h}");
        assert!(lines[1].ends_with("the auto_inc [on]"), "{h}");
        assert!(lines[2].starts_with("  --tables=N"), "{h}");
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("16K"), Some(16384));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
    }
}
