//! The source tree's shape, as CI checks it (`tests/tests/shape.rs`): no production function
//! over [`MAX_FN_LINES`] lines, no production file over [`MAX_FILE_LINES`], and no import of
//! a workload module by the agent's runner or event loop.
//!
//! Production code is every `.rs` file of the workspace's crates outside `tests/`,
//! `examples/` and `benches/` folders, without its top-level `#[cfg(test)]` items. A
//! function's length runs from the line of its `fn` to the line of its closing brace, both
//! counted, blank and comment lines included; braces inside strings, characters and
//! comments do not count.

use std::path::{Path, PathBuf};

/// The longest a production function may be, in lines.
pub const MAX_FN_LINES: usize = 120;
/// The longest a production file may be, in lines (its tests excluded).
pub const MAX_FILE_LINES: usize = 1000;

/// The workspace's crates whose sources are checked.
pub const CRATES: [&str; 6] = [
    "proto",
    "model",
    "script",
    "agent",
    "coordinator",
    "testkit",
];

/// Files of the agent that drive any workload and so may name none (`crate::workloads`).
pub const WORKLOAD_FREE: [&str; 2] = ["agent/src/runner", "agent/src/coop.rs"];

/// One thing the shape does not allow, as the check prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding(pub String);

/// The production part of a file's text: the text with every top-level `#[cfg(test)]` item
/// (the attribute to the item's closing brace or semicolon) emptied, its line breaks kept so
/// that line numbers stay those of the file; and how many lines those items took.
pub fn production(text: &str) -> (String, usize) {
    let sk: Vec<char> = skeleton(text).chars().collect();
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut test_lines) = (0, 0);
    while i < chars.len() {
        let line_start = i == 0 || chars[i - 1] == '\n';
        if line_start
            && sk[i..].starts_with(&['#', '[', 'c', 'f', 'g', '(', 't', 'e', 's', 't', ')', ']'])
        {
            let end = item_end(&sk, i);
            let lines = chars[i..end].iter().filter(|&&c| c == '\n').count();
            out.extend(std::iter::repeat_n('\n', lines));
            test_lines += lines + 1;
            i = end;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    (out, test_lines)
}

/// Where the item whose attribute starts at `from` ends in the skeleton `sk`: after its
/// first `;` outside braces, or after the brace that closes its first `{`.
fn item_end(sk: &[char], from: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in sk.iter().enumerate().skip(from) {
        match c {
            '{' => depth += 1,
            '}' if depth > 1 => depth -= 1,
            '}' if depth == 1 => return k + 1,
            ';' if depth == 0 => return k + 1,
            _ => {}
        }
    }
    sk.len()
}

/// `text` with the contents of comments, strings and character literals blanked out (each
/// character a space, line breaks kept), so that braces and words in them do not count.
pub fn skeleton(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&c, i) {
            // r"..." or r#"..."#: ends at a quote followed by as many hashes.
            let open = 1 + hashes + 1;
            out.extend(c[i..i + open].iter());
            i += open;
            while i < c.len() {
                if c[i] == '"'
                    && c[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes
                {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            out.push('"');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a), left as it is.
            let end = if next == Some('\\') {
                c[i + 2..]
                    .iter()
                    .position(|&ch| ch == '\'')
                    .map(|p| i + 2 + p)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push('\'');
                    for &ch in &c[i + 1..e] {
                        blank(&mut out, ch);
                    }
                    out.push('\'');
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// At `i`, the start of a raw string (`r"`, `r#"`, `br#"`): how many hashes it has.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    let word_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    if c[i] != 'r' || word_before && !(c[i - 1] == 'b' && (i < 2 || !is_ident(c[i - 2]))) {
        return None;
    }
    let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
    (c.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Every function with a body in `text` (production code): its name, first line (1-based)
/// and length in lines.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let s = skeleton(text);
    let b = s.as_bytes();
    let line_of = |pos: usize| s[..pos].bytes().filter(|&x| x == b'\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(p) = s[i..].find("fn ") {
        let at = i + p;
        i = at + 3;
        if at > 0 && is_ident(b[at - 1] as char) {
            continue;
        }
        let name: String = s[at + 3..].chars().take_while(|&ch| is_ident(ch)).collect();
        if name.is_empty() {
            continue;
        }
        // The body starts at the first `{` outside the signature's parentheses; a `;`
        // first means a declaration without a body.
        let mut depth = 0i32;
        let mut body = None;
        for (k, &ch) in b.iter().enumerate().skip(at) {
            match ch {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    body = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let mut level = 0i32;
        let close = b[open..].iter().position(|&ch| {
            match ch {
                b'{' => level += 1,
                b'}' => level -= 1,
                _ => {}
            }
            level == 0
        });
        if let Some(c) = close {
            let (first, last) = (line_of(at), line_of(open + c));
            found.push((name, first, last - first + 1));
        }
    }
    found
}

/// The production `.rs` files of the workspace at `root`, by their path from it.
pub fn production_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name();
            if path.is_dir() {
                if !["tests", "examples", "benches", "target"]
                    .contains(&name.to_str().unwrap_or(""))
                {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for krate in CRATES {
        walk(&root.join(krate), &mut out);
    }
    out.sort();
    out
}

/// What the shape does not allow in the file at `rel` (its path from the workspace root)
/// whose text is `text`.
pub fn check_file(rel: &str, text: &str) -> Vec<Finding> {
    let (prod, test_lines) = production(text);
    let prod = prod.as_str();
    let mut out = Vec::new();
    let lines = prod.lines().count().saturating_sub(test_lines);
    if lines > MAX_FILE_LINES {
        out.push(Finding(format!(
            "{rel}: {lines} production lines (at most {MAX_FILE_LINES}): split it by what its parts do"
        )));
    }
    for (name, line, len) in functions(prod) {
        if len > MAX_FN_LINES {
            out.push(Finding(format!(
                "{rel}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES}): split it by what it does"
            )));
        }
    }
    if WORKLOAD_FREE.iter().any(|w| rel.starts_with(w)) {
        let s = skeleton(prod);
        for (n, l) in s.lines().enumerate() {
            if l.contains("crate::workloads") || l.contains("super::workloads") {
                out.push(Finding(format!(
                    "{rel}:{}: the runner and the event loop name no workload (crate::workloads): take what you need through the traits in agent/src/runner/worker.rs",
                    n + 1
                )));
            }
        }
    }
    out
}

/// Every finding over the workspace at `root`.
pub fn check_tree(root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for path in production_files(root) {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .to_string();
        match std::fs::read_to_string(&path) {
            Ok(text) => out.extend(check_file(&rel, &text)),
            Err(e) => out.push(Finding(format!("{rel}: cannot be read: {e}"))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_fn(name: &str, body_lines: usize) -> String {
        let mut s = format!("pub(crate) async fn {name}(a: u32) -> u32 {{\n");
        for i in 0..body_lines {
            s.push_str(&format!("    let _x{i} = a + {i};\n"));
        }
        s.push_str("    a\n}\n");
        s
    }

    #[test]
    fn a_function_is_counted_from_its_fn_to_its_closing_brace() {
        let text = format!("//! doc\n\n{}\nfn short() {{}}\n", long_fn("big", 10));
        let f = functions(&text);
        assert_eq!(f[0], ("big".to_string(), 3, 13));
        assert_eq!(f[1], ("short".to_string(), 17, 1));
    }

    #[test]
    fn a_long_function_and_a_long_file_are_found() {
        // The fn line, the body, the last expression and the closing brace.
        let text = long_fn("too_long", 118);
        let found = check_file("agent/src/x.rs", &text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].0.contains("fn too_long is 121 lines"), "{found:?}");
        assert!(check_file("agent/src/x.rs", &long_fn("fits", 117)).is_empty());
        let big: String = (0..1001)
            .map(|i| format!("const C{i}: u32 = {i};\n"))
            .collect();
        let found = check_file("model/src/big.rs", &big);
        assert!(found[0].0.contains("1001 production lines"), "{found:?}");
    }

    #[test]
    fn braces_in_strings_chars_and_comments_do_not_count() {
        let text = "fn a() {\n    let s = \"}}\";\n    let c = '}';\n    // }\n    /* } /* } */ */\n    let r = r#\"}\"#;\n    let l: &'static str = s;\n}\nfn b() {}\n";
        let f = functions(text);
        assert_eq!(f[0], ("a".to_string(), 1, 8), "{f:?}");
        assert_eq!(f[1].0, "b");
    }

    #[test]
    fn tests_and_declarations_are_not_production_functions() {
        let text = format!(
            "trait T {{\n    fn decl(&self);\n}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
            long_fn("test_helper", 200)
        );
        assert!(check_file("agent/src/t.rs", &text).is_empty());
        assert!(functions(&production(&text).0).is_empty());
    }

    #[test]
    fn production_code_after_a_test_module_counts_where_it_stands() {
        let tests = format!("#[cfg(test)]\nmod tests {{\n{}}}\n", long_fn("helper", 200));
        let text = format!("fn a() {{}}\n{tests}{}", long_fn("after", 130));
        let found = check_file("agent/src/t.rs", &text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].0.contains(":208: fn after is 133 lines"),
            "{found:?}"
        );
        // A test item that ends in a semicolon goes alone.
        let text = format!("#[cfg(test)]\nuse x::y;\n{}", long_fn("long", 130));
        assert_eq!(check_file("agent/src/t.rs", &text).len(), 1);
        // The file's lines are counted without its tests.
        let (prod, test_lines) = production(&tests);
        assert_eq!(prod.lines().count(), test_lines);
    }

    #[test]
    fn the_runner_may_not_import_a_workload() {
        let text = "use crate::workloads::oltp::OltpWorker;\n/// [`crate::workloads::X`] in a comment is fine\n";
        let found = check_file("agent/src/runner/mod.rs", text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].0.starts_with("agent/src/runner/mod.rs:1:"));
        assert!(check_file("agent/src/service/mod.rs", text).is_empty());
    }
}
