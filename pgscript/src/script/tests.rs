//! Script files as pgbench's documentation writes them, and the mistakes refused.

use super::*;

const TPCB: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

#[test]
fn the_tpcb_like_script_is_four_sets_and_seven_statements() {
    let p = Program::parse(TPCB).unwrap();
    assert_eq!(p.commands.len(), 11);
    assert!(matches!(&p.commands[0], Command::Set { var, .. } if var == "aid"));
    assert_eq!(p.listing[0], "\\set aid random(1, 100000 * :scale)");
    assert_eq!(p.listing[4], "BEGIN;");
    let Command::Sql { sql, end } = &p.commands[5] else {
        panic!("{:?}", p.commands[5]);
    };
    assert_eq!(*end, SqlEnd::Plain);
    assert_eq!(sql.params(), vec!["delta".to_string(), "aid".to_string()]);
    assert_eq!(
        sql.numbered(),
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"
    );
    assert_eq!(p.lines[10], 11);
    assert!(p.uses("scale") && p.uses("tid") && !p.uses("nope"));
}

#[test]
fn the_documented_gset_and_aset_example_parses() {
    let s = "UPDATE pgbench_accounts\n  SET abalance = abalance + :delta\n  WHERE aid = :aid\n  RETURNING abalance \\gset\n-- compound of two queries\nSELECT 1 \\;\nSELECT 2 AS two, 3 AS three \\gset p_\nSELECT 4 AS four \\; SELECT 5 AS five \\aset\n";
    let p = Program::parse(s).unwrap();
    assert_eq!(p.commands.len(), 3, "{:?}", p.commands);
    assert!(matches!(&p.commands[0], Command::Sql { end: SqlEnd::Gset(x), .. } if x.is_empty()));
    let Command::Sql { sql, end } = &p.commands[1] else {
        panic!()
    };
    assert_eq!(*end, SqlEnd::Gset("p_".into()));
    assert_eq!(sql.statements, 2);
    assert_eq!(sql.source(), "SELECT 1 ;\nSELECT 2 AS two, 3 AS three");
    assert!(
        matches!(&p.commands[2], Command::Sql { end: SqlEnd::Aset(_), sql } if sql.statements == 2)
    );
    assert_eq!(p.listing[0], "UPDATE pgbench_accounts \\gset");
    assert!(p.check_mode(true).is_err(), "\\; needs the simple protocol");
    assert!(p.check_mode(false).is_ok());
}

#[test]
fn conditionals_are_linked() {
    let s = "\\set x random(1, 3)\n\\if :x = 1\nSELECT 1;\n\\elif :x = 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n";
    let p = Program::parse(s).unwrap();
    assert!(matches!(p.commands[1], Command::If { next: 3, .. }));
    assert!(matches!(
        p.commands[3],
        Command::Elif {
            next: 5,
            end: 7,
            ..
        }
    ));
    assert!(matches!(p.commands[5], Command::Else { end: 7 }));
    assert!(matches!(p.commands[7], Command::Endif));
    let nested = "\\if true\n\\if false\nSELECT 1;\n\\endif\n\\endif\n";
    let p = Program::parse(nested).unwrap();
    assert!(matches!(p.commands[0], Command::If { next: 4, .. }));
    assert!(matches!(p.commands[1], Command::If { next: 3, .. }));
}

#[test]
fn sleeps_pipelines_and_quotes() {
    let s = "\\sleep 10 ms\n\\sleep :t us\n\\sleep 2\n\\startpipeline\nSELECT ':notavar', $$a;b$$, \"x;y\", 1::int, /* ; */ :aid;\nSELECT 2;\n\\endpipeline\n";
    let p = Program::parse(s).unwrap();
    assert_eq!(
        p.commands[0],
        Command::Sleep {
            amount: SleepFor::Const(10),
            unit_us: 1_000
        }
    );
    assert_eq!(
        p.commands[1],
        Command::Sleep {
            amount: SleepFor::Var("t".into()),
            unit_us: 1
        }
    );
    assert_eq!(
        p.commands[2],
        Command::Sleep {
            amount: SleepFor::Const(2),
            unit_us: 1_000_000
        }
    );
    let Command::Sql { sql, .. } = &p.commands[4] else {
        panic!()
    };
    assert_eq!(sql.params(), vec!["aid".to_string()]);
    assert!(
        p.check_mode(false).is_err(),
        "pipelines need the extended protocol"
    );
    assert!(p.check_mode(true).is_ok());
}

#[test]
fn continued_meta_lines_and_sql_without_semicolon() {
    let s = "\\set aid (1021 * random(1, 100000 * :scale)) % \\\n           (100000 * :scale) + 1\nSELECT :aid\n\\sleep 1 us\n";
    let p = Program::parse(s).unwrap();
    assert_eq!(p.commands.len(), 3);
    assert!(matches!(&p.commands[1], Command::Sql { sql, .. } if sql.source() == "SELECT :aid"));
}

fn error(s: &str) -> ScriptError {
    Program::parse(s).expect_err(s)
}

#[test]
fn mistakes_are_refused_with_their_line_and_column() {
    let e = error("SELECT 1;\n\\set aid random(1, \n");
    assert_eq!((e.line, e.column), (2, 19), "{e}");
    let e = error("\\set x random(1,\nSELECT 1;\n");
    assert_eq!((e.line, e.column), (1, 17), "{e}");
    let e = error("\\set x 1 +* 2\n");
    assert_eq!((e.line, e.column), (1, 11), "{e}");
    let e = error("SELECT 1;\n\n  \\setshell x echo 1\n");
    assert_eq!((e.line, e.column), (3, 3), "{e}");
    assert!(e.message.contains("no shell commands"), "{e}");
    assert!(error("\\shell ls\n").message.contains("\\shell"));
    assert!(error("\\nosuch\n").message.contains("invalid command"));
    assert!(error("\\gset\n").message.contains("must follow"));
    assert!(error("\\if true\nSELECT 1;\n").message.contains("\\endif"));
    assert!(error("\\endif\n").message.contains("without"));
    assert!(
        error("\\if 1\n\\else\n\\elif 2\n\\endif\n")
            .message
            .contains("after \\else")
    );
    assert!(
        error("\\startpipeline\nSELECT 1;\n")
            .message
            .contains("pipeline")
    );
    assert!(
        error("\\startpipeline\nSELECT 1 \\gset\n\\endpipeline\n")
            .message
            .contains("pipeline")
    );
    assert!(error("\\sleep 1 min\n").message.contains("unit"));
    assert!(error("\\set 1x 2\n").message.contains("variable name"));
    assert!(error("SELECT 'abc;\n").message.contains("unterminated"));
    assert!(error("-- only a comment\n\n").message.contains("empty"));
    let many: String = (0..256).map(|i| format!(":v{i},")).collect();
    assert!(
        error(&format!("SELECT {many} 1;"))
            .message
            .contains("too many")
    );
}
