//! A workload's options as declared once: each spec lists its [`OptionDef`]s (name as the
//! command line spells it, default, help, kind) and reads them from an [`Options`] bag.
//!
//! The same declaration drives the command line (which options exist, which are on/off
//! switches, `fleetbench TEST help`), the wire (a Start carries the bag as text, the agent
//! reads it with the same function), and the result document (the options under their
//! JSON names, typed by kind). A group of options is declared with [`declare_options!`]:
//! one entry per option gives its field, its [`OptionDef`] and how it is read and written
//! ([`OptionValue`] by the field's type, or a [`Codec`]), so adding an option touches its
//! entry and the code that uses it.

use std::collections::BTreeMap;

use serde_json::Value;

/// Why a spec is refused; the message names the option as the command line spells it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("invalid value for --{option}: '{value}' ({why})")]
    Invalid {
        option: &'static str,
        value: String,
        why: &'static str,
    },
    #[error(
        "--range-size={range} is larger than --table-size={size}: every range would run past the table"
    )]
    RangeTooLarge { range: u32, size: u64 },
    #[error("{0}")]
    Options(String),
}

impl SpecError {
    pub fn invalid(option: &'static str, value: impl ToString, why: &'static str) -> SpecError {
        SpecError::Invalid {
            option,
            value: value.to_string(),
            why,
        }
    }
}

/// Options declared once ([`OptionDef`]s): the command line, the wire (an option bag) and
/// the result document all follow from the declaration, so an option is added here and
/// where the workload uses it, nowhere else. A whole test ([`DeclaredTest`]) or a group of
/// one test's options (OLTP's statement counts and switches) is declared so, with
/// `declare_options!` (crate::options: one entry per option, from which the field, its
/// definition, its read and its write follow). The groups whose options map irregularly
/// onto their fields (fileio, the random distributions, the database targets) implement it
/// by hand, each with a test that every option is written back (`assert_written_back`).
pub trait Declared: Sized {
    /// Its options, in the order `fleetbench TEST help` lists them.
    const OPTIONS: &'static [OptionDef];
    /// The value from its options (every declared one present: given or default).
    fn from_options(o: &Options) -> Result<Self, SpecError>;
    /// The options that give this value back through [`Declared::from_options`], in the
    /// order the result document records them.
    fn to_options(&self) -> Written;
    /// Bounds across options, beyond what each option's parsing checks.
    fn check(&self) -> Result<(), SpecError> {
        Ok(())
    }

    /// The value of the declared defaults (every option as not given).
    fn defaults() -> Self {
        Self::resolve("defaults", []).expect("the declared defaults are valid")
    }

    /// Whether `name` (the declared spelling) is one of these options.
    fn declares(name: &str) -> bool {
        Self::OPTIONS.iter().any(|o| o.name == name)
    }

    /// Reads and checks the options given (name without dashes, value) for `test`; a name
    /// not declared here is refused.
    fn resolve<'a>(
        test: &str,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, SpecError> {
        Self::read(&Options::resolve(test, Self::OPTIONS, given)?)
    }

    /// The value from its options, checked.
    fn read(o: &Options) -> Result<Self, SpecError> {
        let v = Self::from_options(o)?;
        v.check()?;
        Ok(v)
    }
}

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

/// How a field is read from its options and written back, one text per option: most
/// fields take one option ([`Plain`] by the field's type, [`Words`], [`Trim`]); a field
/// that one value spans several options of (a range's two ends) has its own codec.
pub trait Codec<T, const N: usize> {
    /// The field from its options `names` (each declared, given or default).
    fn read(&self, o: &Options, names: [&'static str; N]) -> Result<T, SpecError>;
    /// The texts of its options, in the order of `names`, that read back as `v`.
    fn write(&self, v: &T) -> [String; N];
}

/// A field's value as one option's text, by its type (and the option's kind): what a
/// field declared without a codec is read and written with.
pub trait OptionValue: Sized {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError>;
    fn write(&self) -> String;
}

/// The codec of a field read and written by its type ([`OptionValue`]).
pub struct Plain;

impl<T: OptionValue> Codec<T, 1> for Plain {
    fn read(&self, o: &Options, [name]: [&'static str; 1]) -> Result<T, SpecError> {
        T::read(o, name)
    }

    fn write(&self, v: &T) -> [String; 1] {
        [v.write()]
    }
}

/// An option that takes one of a few words, each the text of one value of the field; `.1`
/// says which words, for the error.
pub struct Words<T: 'static>(pub &'static [(&'static str, T)], pub &'static str);

impl<T: Copy + PartialEq + 'static> Codec<T, 1> for Words<T> {
    fn read(&self, o: &Options, [name]: [&'static str; 1]) -> Result<T, SpecError> {
        let words: Vec<&'static str> = self.0.iter().map(|(w, _)| *w).collect();
        let word = o.choice(name, &words, self.1)?;
        Ok(self
            .0
            .iter()
            .find(|(w, _)| *w == word)
            .expect("a word of the table")
            .1)
    }

    fn write(&self, v: &T) -> [String; 1] {
        let (word, _) = self
            .0
            .iter()
            .find(|(_, x)| x == v)
            .expect("every value of the field has its word");
        [word.to_string()]
    }
}

/// A text option read without its surrounding blanks (a name that goes into SQL); as an
/// `Option<String>`, blank is None.
pub struct Trim;

impl Codec<String, 1> for Trim {
    fn read(&self, o: &Options, [name]: [&'static str; 1]) -> Result<String, SpecError> {
        Ok(o.text(name).trim().to_string())
    }

    fn write(&self, v: &String) -> [String; 1] {
        [v.clone()]
    }
}

impl Codec<Option<String>, 1> for Trim {
    fn read(&self, o: &Options, names: [&'static str; 1]) -> Result<Option<String>, SpecError> {
        Ok(Some(self.read(o, names)?).filter(|s: &String| !s.is_empty()))
    }

    fn write(&self, v: &Option<String>) -> [String; 1] {
        [v.clone().unwrap_or_default()]
    }
}

/// Integers: a Count as a number, a Size with sysbench's suffixes.
macro_rules! integer_option {
    ($($t:ty),*) => {$(
        impl OptionValue for $t {
            fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
                match o.def(name).kind {
                    Kind::Size => {
                        let bytes = o.size(name)?;
                        <$t>::try_from(bytes).map_err(|_| o.invalid(name, "too large"))
                    }
                    _ => o.num(name),
                }
            }

            fn write(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

integer_option!(u16, u32, u64);

impl OptionValue for bool {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        o.flag(name)
    }

    fn write(&self) -> String {
        (if *self { "on" } else { "off" }).to_string()
    }
}

impl OptionValue for f64 {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        o.float(name)
    }

    fn write(&self) -> String {
        self.to_string()
    }
}

/// A text option as given.
impl OptionValue for String {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        Ok(o.text(name).to_string())
    }

    fn write(&self) -> String {
        self.clone()
    }
}

/// An option that may be left empty (not given): blank is None.
impl<T: OptionValue> OptionValue for Option<T> {
    fn read(o: &Options, name: &'static str) -> Result<Self, SpecError> {
        match o.text(name).trim() {
            "" => Ok(None),
            _ => T::read(o, name).map(Some),
        }
    }

    fn write(&self) -> String {
        self.as_ref().map(T::write).unwrap_or_default()
    }
}

/// Field `T` from its options `names` with `codec` (what `declare_options!` reads with).
pub fn read_field<T, C: Codec<T, N>, const N: usize>(
    codec: &C,
    o: &Options,
    names: [&'static str; N],
) -> Result<T, SpecError> {
    codec.read(o, names)
}

/// Writes field `v` as its options `names` with `codec` (what `declare_options!` writes
/// with).
pub fn write_field<T, C: Codec<T, N>, const N: usize>(
    w: &mut Written,
    codec: &C,
    v: &T,
    names: [&'static str; N],
) {
    w.0.extend(names.into_iter().zip(codec.write(v)));
}

/// Declares a group of options once: each entry is a field (doc, name, type) with the
/// option (or options) it holds and, where the field's type does not say how, the codec
/// that reads and writes it. The struct, its [`Declared`](crate::options::Declared)
/// `OPTIONS` (in entry order: `fleetbench TEST help`'s order), `from_options` and
/// `to_options` (the wire's and the result document's order) all follow, so an option
/// cannot be declared without being read and written. Bounds across fields go in the
/// function `check = ...` names (the group's `Declared::check`).
///
/// ```ignore
/// declare_options! {
///     /// memory's options.
///     #[derive(Debug, Clone, Copy, PartialEq)]
///     pub struct MemorySpec {
///         /// `--memory-block-size`: bytes each event walks.
///         pub block_size: u64 = option(
///             "memory-block-size",
///             Size,
///             "1K",
///             "Size of the memory block per event, e.g. 1K",
///         );
///         /// `--memory-scope`: one block shared by every thread (global) or one per thread.
///         pub global: bool = option(
///             "memory-scope",
///             Text,
///             "global",
///             "global (one block shared) or local (one per thread)",
///         ) => Words(&[("global", true), ("local", false)], "expected global or local");
///     }
///     check = MemorySpec::bounds;
/// }
/// ```
///
/// An option's `aliases = ["other-name", ...]` follow its help (`OltpOptions`); a field
/// that several options make up lists them all with its codec (`= option(..), option(..)
/// => MinMax;`, `OltpOptions::user_delay_us`). Options mapped irregularly (a distribution's
/// variants, fileio's configuration with fields of the agent's own) keep hand-written
/// `Declared` impls, each with a test that every option is written back
/// (`spec::assert_written_back`).
macro_rules! declare_options {
    (@codec) => {
        $crate::options::Plain
    };
    (@codec $codec:expr) => {
        $codec
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty = $(
                    option($oname:literal, $kind:ident, $default:expr, $help:expr
                        $(, aliases = [$($alias:literal),* $(,)?])? $(,)?)
                ),+ $(=> $codec:expr)? ;
            )*
        }
        $(check = $check:expr;)?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                $fvis $field: $ty,
            )*
        }

        impl $crate::options::Declared for $name {
            const OPTIONS: &'static [$crate::options::OptionDef] = &[$($(
                $crate::options::OptionDef::new(
                    $oname,
                    $crate::options::Kind::$kind,
                    $default,
                    $help,
                )
                .aliases(&[$($($alias),*)?]),
            )+)*];

            fn from_options(
                o: &$crate::options::Options,
            ) -> Result<Self, $crate::options::SpecError> {
                Ok($name {
                    $($field: $crate::options::read_field(
                        &$crate::options::declare_options!(@codec $($codec)?),
                        o,
                        [$($oname),+],
                    )?,)*
                })
            }

            fn to_options(&self) -> $crate::options::Written {
                let mut w = $crate::options::Written::default();
                $($crate::options::write_field(
                    &mut w,
                    &$crate::options::declare_options!(@codec $($codec)?),
                    &self.$field,
                    [$($oname),+],
                );)*
                w
            }

            $(
                fn check(&self) -> Result<(), $crate::options::SpecError> {
                    $check(self)
                }
            )?
        }
    };
}

pub(crate) use declare_options;

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
