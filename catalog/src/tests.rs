//! The catalog on a real SQLite file: records in and out, filters, names of runs, tags,
//! removal, two writers at once and a catalog from a newer fleetbench.

use super::*;

/// A catalog file of its own under the system's temporary directory, removed on drop.
struct TempCatalog(PathBuf);

impl TempCatalog {
    fn new(name: &str) -> TempCatalog {
        let dir =
            std::env::temp_dir().join(format!("fleetbench-catalog-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempCatalog(dir.join("sub").join("catalog.db"))
    }

    fn location(&self) -> Location {
        Location::File(self.0.clone())
    }
}

impl Drop for TempCatalog {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent().and_then(Path::parent) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn record(test: &str, started_s: i64, tps: f64) -> Record {
    Record {
        kind: "run".into(),
        started_ms: started_s * 1000,
        ended_ms: started_s * 1000 + 10_000,
        test: test.into(),
        command_line: "fleetbench oltp_read_only run".into(),
        targets: [("default".to_string(), "10.11.6-MariaDB".to_string())].into(),
        agents: vec!["db1:7600".into(), "db2:7600".into()],
        threads: 8,
        tps,
        qps: Some(tps * 16.0),
        lat_pct: 95.0,
        lat_pct_ms: 2.5,
        figures: [("tps".to_string(), tps), ("p95".to_string(), 2.5 + 1e-13)].into(),
        cmp_key: format!("{test} threads=8"),
        cmp_hash: "00112233aabbccdd".into(),
        format_version: 2,
        doc: format!("{{\"test\":\"{test}\"}}"),
        ..Default::default()
    }
}

#[tokio::test]
async fn records_come_back_newest_first_and_by_their_filters() {
    let t = TempCatalog::new("list");
    let mut c = Catalog::open(&t.location()).await.unwrap();
    let mut a = record("oltp_read_only", 1_700_000_000, 1000.0);
    a.tags = [("pool".to_string(), "8G;a=b".to_string())].into();
    let id_a = c.insert(&a).await.unwrap();
    let mut b = record("oltp_point_select", 1_700_000_100, 2000.0);
    b.qps = None;
    let id_b = c.insert(&b).await.unwrap();
    assert_eq!(id_a.len(), ids::ID_LEN);
    let all = c.list(&Filter::default()).await.unwrap();
    let got: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(got, [id_b.as_str(), id_a.as_str()]);
    // Everything but the document comes back as it went in.
    let mut want = a.clone();
    want.id = id_a.clone();
    want.doc = String::new();
    assert_eq!(all[1], want);
    assert_eq!(all[0].qps, None);
    let f = Filter {
        tag: Some(("pool".into(), "8G;a=b".into())),
        ..Default::default()
    };
    assert_eq!(c.list(&f).await.unwrap().len(), 1);
    let f = Filter {
        test: Some("oltp_point_select".into()),
        ..Default::default()
    };
    assert_eq!(c.list(&f).await.unwrap()[0].id, id_b);
    let f = Filter {
        since_ms: Some(1_700_000_050_000),
        ..Default::default()
    };
    assert_eq!(c.list(&f).await.unwrap().len(), 1);
    let f = Filter {
        target: Some("default".into()),
        before_ms: Some(1_700_000_050_000),
        ..Default::default()
    };
    assert_eq!(c.list(&f).await.unwrap()[0].id, id_a);
    let f = Filter {
        target: Some("nosuch".into()),
        ..Default::default()
    };
    assert!(c.list(&f).await.unwrap().is_empty());
    // With its document.
    let got = c.get(&IdSpec::Last(1)).await.unwrap();
    assert_eq!(
        (got.id.as_str(), got.doc.as_str()),
        (id_a.as_str(), a.doc.as_str())
    );
}

#[tokio::test]
async fn runs_are_named_by_prefix_last_and_last_n() {
    let t = TempCatalog::new("names");
    let mut c = Catalog::open(&t.location()).await.unwrap();
    let first = c.insert(&record("cpu", 1_700_000_000, 1.0)).await.unwrap();
    let second = c.insert(&record("cpu", 1_700_000_000, 2.0)).await.unwrap();
    let third = c.insert(&record("cpu", 1_800_000_000, 3.0)).await.unwrap();
    assert_eq!(c.resolve(&IdSpec::Last(0)).await.unwrap(), third);
    let before: Vec<String> = vec![
        c.resolve(&IdSpec::Last(1)).await.unwrap(),
        c.resolve(&IdSpec::Last(2)).await.unwrap(),
    ];
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    both.reverse();
    assert_eq!(before, both);
    let e = c.resolve(&IdSpec::Last(3)).await.unwrap_err().to_string();
    assert!(e.contains("no run last~3"), "{e}");
    assert_eq!(
        c.resolve(&IdSpec::parse(&third[..6]).unwrap())
            .await
            .unwrap(),
        third
    );
    // The first two share their first 8 digits (the same second).
    let e = c
        .resolve(&IdSpec::parse(&first[..8]).unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("names 2 runs") && e.contains(&first), "{e}");
    let e = c
        .resolve(&IdSpec::parse("ffffffff").unwrap())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no run ffffffff"), "{e}");
    // Tags replaced, then the run removed.
    let tags: BTreeMap<String, String> = [("k".to_string(), "v".to_string())].into();
    c.set_tags(&IdSpec::Prefix(third.clone()), &tags)
        .await
        .unwrap();
    assert_eq!(c.get(&IdSpec::Last(0)).await.unwrap().tags, tags);
    assert_eq!(c.remove(&IdSpec::Last(0)).await.unwrap(), third);
    assert_eq!(c.list(&Filter::default()).await.unwrap().len(), 2);
}

#[tokio::test]
async fn two_writers_at_once_both_land() {
    let t = TempCatalog::new("writers");
    Catalog::open(&t.location()).await.unwrap();
    let mut tasks = Vec::new();
    for w in 0..2 {
        let loc = t.location();
        tasks.push(tokio::spawn(async move {
            let mut c = Catalog::open(&loc).await.unwrap();
            for i in 0..25 {
                c.insert(&record("cpu", 1_700_000_000 + w * 100 + i, 1.0))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut c = Catalog::open(&t.location()).await.unwrap();
    assert_eq!(c.list(&Filter::default()).await.unwrap().len(), 50);
}

#[tokio::test]
async fn a_catalog_from_a_newer_fleetbench_is_refused_untouched() {
    let t = TempCatalog::new("newer");
    let mut c = Catalog::open(&t.location()).await.unwrap();
    sqlx::query("UPDATE fleetbench_catalog_meta SET value = '99' WHERE name = 'schema_version'")
        .execute(&mut c.conn)
        .await
        .unwrap();
    drop(c);
    let e = Catalog::open(&t.location())
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("newer fleetbench (schema 99"), "{e}");
    // Not a database at all.
    let junk = t.0.with_file_name("junk.db");
    std::fs::write(&junk, "not sqlite at all, just text that is long enough").unwrap();
    let e = Catalog::open(&Location::File(junk))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("cannot"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn locations_and_maps_round_trip() {
    assert_eq!(
        Location::parse("postgres://u:pw@h/db"),
        Location::Url("postgres://u:pw@h/db".into())
    );
    assert_eq!(
        Location::parse("postgres://u:pw@h/db").describe(),
        "postgres://u:***@h/db"
    );
    assert_eq!(
        Location::parse("sqlite:///tmp/x.db"),
        Location::File("/tmp/x.db".into())
    );
    assert_eq!(Location::parse("runs.db"), Location::File("runs.db".into()));
    let m: BTreeMap<String, String> = [
        ("a;b".to_string(), "c=d%e".to_string()),
        ("x_y".to_string(), String::new()),
    ]
    .into();
    assert_eq!(decode_map(&encode_map(&m)), m);
}
