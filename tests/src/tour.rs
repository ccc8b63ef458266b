//! The README's quick tour as the test that runs it reads it (`tests/tests/quick_tour.rs`).
//!
//! The README marks its parts with HTML comments, which a rendered README does not show:
//! `<!-- quick-tour: install -->` before the block that puts the binaries on PATH,
//! `<!-- quick-tour: sql -->` before the SQL that makes the database and user, and
//! `<!-- quick-tour -->` ... `<!-- /quick-tour -->` around the tour itself. Inside the tour,
//! every `sh` block's commands run in order, and a `text` block is a sample of what the
//! command before it prints, checked by [`sample_matches`].

use regex::Regex;

/// The quick tour: how the README installs the binaries, the SQL it runs first, and its
/// commands in order.
#[derive(Debug, Default, PartialEq)]
pub struct Tour {
    /// The commands of the install block.
    pub install: Vec<String>,
    /// The SQL block, as written.
    pub sql: String,
    /// The tour's commands in order.
    pub steps: Vec<Step>,
}

/// One command of the tour (continuation lines kept as written), and the sample of its
/// output the README shows after it, if any.
#[derive(Debug, PartialEq)]
pub struct Step {
    pub command: String,
    pub sample: Option<String>,
}

/// Reads the tour out of the README's text; an error names what is missing.
pub fn read(readme: &str) -> Result<Tour, String> {
    let install = marked_block(readme, "<!-- quick-tour: install -->", "sh")?;
    let sql = marked_block(readme, "<!-- quick-tour: sql -->", "sql")?;
    let start = readme
        .find("<!-- quick-tour -->")
        .ok_or("no <!-- quick-tour --> marker")?;
    let end = readme[start..]
        .find("<!-- /quick-tour -->")
        .ok_or("no <!-- /quick-tour --> after <!-- quick-tour -->")?
        + start;
    let mut steps: Vec<Step> = Vec::new();
    for (lang, body) in fenced_blocks(&readme[start..end]) {
        match lang.as_str() {
            "sh" => steps.extend(commands(&body).into_iter().map(|command| Step {
                command,
                sample: None,
            })),
            "text" => {
                let last = steps
                    .last_mut()
                    .ok_or("a sample of output before any command")?;
                last.sample = Some(body);
            }
            other => return Err(format!("a ```{other} block in the quick tour")),
        }
    }
    if steps.is_empty() {
        return Err("the quick tour has no commands".into());
    }
    Ok(Tour {
        install: commands(&install),
        sql,
        steps,
    })
}

/// The first fenced block after `marker`, which must be in language `lang`.
fn marked_block(readme: &str, marker: &str, lang: &str) -> Result<String, String> {
    let at = readme.find(marker).ok_or(format!("no {marker} marker"))?;
    let (found, body) = fenced_blocks(&readme[at..])
        .into_iter()
        .next()
        .ok_or(format!("no block after {marker}"))?;
    if found != lang {
        return Err(format!(
            "the block after {marker} is ```{found}, not ```{lang}"
        ));
    }
    Ok(body)
}

/// The fenced blocks of `md`: (language, body) in order.
fn fenced_blocks(md: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in md.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The commands of a shell block: a line ending in `\` continues on the next one (kept as
/// written); blank lines and lines that are only a comment are left out.
pub fn commands(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in block.lines() {
        if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        current.push_str(line);
        if line.trim_end().ends_with('\\') {
            current.push('\n');
        } else {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The words of a command, its continuation breaks and a trailing comment left out (the
/// tour's commands quote nothing that holds a blank or a `#`).
pub fn words(command: &str) -> Vec<&str> {
    command
        .split_whitespace()
        .filter(|w| *w != "\\")
        .take_while(|w| !w.starts_with('#'))
        .collect()
}

/// Whether `output` shows `sample` as the README shows it: the sample's lines in a row from
/// wherever its first line is, where a line `...` stands for any number of lines left out. Numbers may differ (a run's
/// figures, a version), and so may the blanks between columns; everything else must be
/// as written. The error says which sample line was not found, and after what.
pub fn sample_matches(sample: &str, output: &str) -> Result<(), String> {
    let out: Vec<&str> = output.lines().collect();
    let mut at = 0;
    let mut skip = true;
    for line in sample.lines() {
        if line.trim() == "..." {
            skip = true;
            continue;
        }
        let re = line_pattern(line);
        let found = if skip {
            (at..out.len()).find(|&i| re.is_match(out[i]))
        } else {
            (at < out.len() && re.is_match(out[at])).then_some(at)
        };
        match found {
            Some(i) => at = i + 1,
            None => {
                let after = at.checked_sub(1).map_or("the start", |i| out[i]);
                return Err(format!("sample line {line:?} not found after {after:?}"));
            }
        }
        skip = false;
    }
    Ok(())
}

/// A sample line as a pattern: its numbers stand for any number, its runs of blanks for any
/// run of blanks, and the line's ends are the output line's.
fn line_pattern(line: &str) -> Regex {
    let number = Regex::new(r"[0-9]+(?:\.[0-9]+)*").expect("number pattern");
    let mut pat = String::from(r"^\s*");
    for (i, part) in line.split_whitespace().enumerate() {
        if i > 0 {
            pat.push_str(r"\s+");
        }
        let mut last = 0;
        for m in number.find_iter(part) {
            pat.push_str(&regex::escape(&part[last..m.start()]));
            pat.push_str(r"[0-9]+(?:\.[0-9]+)*");
            last = m.end();
        }
        pat.push_str(&regex::escape(&part[last..]));
    }
    pat.push_str(r"\s*$");
    Regex::new(&pat).expect("sample line pattern")
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# x\n\n<!-- quick-tour: install -->\n```sh\ncargo build\ncp a b   # c\n```\n\
        <!-- quick-tour: sql -->\n```sql\nCREATE DATABASE d;\n```\n\
        <!-- quick-tour -->\n```sh\n# a comment\nfb one \\\n    --two run\n\nfb three &\n```\n\
        Its output:\n```text\nLatency (ms):\n...\n    95th percentile:   46.27\n```\n\
        ```sh\nfb four\n```\n<!-- /quick-tour -->\n```sh\nnot in the tour\n```\n";

    #[test]
    fn the_tour_is_its_marked_blocks_in_order() {
        let t = read(README).unwrap();
        assert_eq!(t.install, ["cargo build", "cp a b   # c"]);
        assert_eq!(t.sql, "CREATE DATABASE d;\n");
        let cmds: Vec<&str> = t.steps.iter().map(|s| s.command.as_str()).collect();
        assert_eq!(cmds, ["fb one \\\n    --two run", "fb three &", "fb four"]);
        assert_eq!(
            t.steps[1].sample.as_deref(),
            Some("Latency (ms):\n...\n    95th percentile:   46.27\n")
        );
        assert_eq!(t.steps[0].sample, None);
    }

    #[test]
    fn a_tour_without_its_markers_is_an_error() {
        assert!(read("no markers").unwrap_err().contains("install"));
        let no_end = README.replace("<!-- /quick-tour -->", "");
        assert!(read(&no_end).unwrap_err().contains("/quick-tour"));
        let other = README.replace("```text", "```json");
        assert!(read(&other).unwrap_err().contains("json"));
    }

    #[test]
    fn words_leave_out_breaks_and_comments() {
        assert_eq!(words("fb a \\\n    b=1 &   # two"), ["fb", "a", "b=1", "&"]);
    }

    #[test]
    fn a_sample_matches_other_numbers_and_blanks_but_not_other_words() {
        let out =
            "fleetbench 0.2.0\n\nLatency (ms):\n   min:  1.5\n   95th percentile:      7.25\nend\n";
        assert!(sample_matches("fleetbench 0.1.0\n", out).is_ok());
        assert!(sample_matches("Latency (ms):\n...\n 95th percentile: 46.27\n", out).is_ok());
        // Without `...`, the lines must follow each other.
        let gap = sample_matches("Latency (ms):\n 95th percentile: 46.27\n", out).unwrap_err();
        assert!(gap.contains("95th percentile"), "{gap}");
        assert!(sample_matches("...\n 95th quantile: 46.27\n", out).is_err());
        assert!(sample_matches("...\nend of it\n", out).is_err());
        assert!(sample_matches("...\nend\nmore\n", out).is_err());
    }
}
