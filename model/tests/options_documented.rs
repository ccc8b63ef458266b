//! Every declared option is in the manual: a new option without a line in docs/ fails here,
//! as one without a write fails the round trip (round_trip.rs).

use fleetbench_model::spec::{DECLARED, GROUPS};

#[test]
fn every_declared_option_is_in_the_manual() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut manual = String::new();
    for entry in std::fs::read_dir(&docs).expect("docs/ beside the crates") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            manual.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    let declared = DECLARED
        .iter()
        .flat_map(|d| d.options)
        .chain(GROUPS.iter().flat_map(|(_, o)| *o));
    let mut missing = Vec::new();
    let mut count = 0;
    for o in declared {
        count += 1;
        if !manual.contains(&format!("--{}", o.name)) {
            missing.push(o.name);
        }
    }
    assert!(count > 80, "only {count} options declared?");
    assert!(
        missing.is_empty(),
        "declared options the manual (docs/*.md) does not name: {missing:?}"
    );
}
