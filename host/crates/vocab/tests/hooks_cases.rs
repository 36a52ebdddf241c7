//! The hooks cases under `tests/hooks/`: each input reads as a document and has the verdict of
//! both of its readers beside it (`.validate` for the plugin validator, `.engine` for the hook
//! engine; their tests live with those crates).

use std::path::Path;

use warden_vocab::schema::hooks::HooksDocument;

#[test]
fn every_case_reads_and_has_both_verdicts_beside_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hooks");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("cases").flatten() {
        let p = e.path();
        match p.extension().and_then(|x| x.to_str()) {
            Some("json") => {
                let text = std::fs::read_to_string(&p).expect("read");
                let v: serde_json::Value = serde_json::from_str(&text).expect("case is JSON");
                let _ = HooksDocument::from_value(&v);
                for ext in ["validate", "engine"] {
                    assert!(
                        p.with_extension(ext).is_file(),
                        "{} has no .{ext}",
                        p.display()
                    );
                }
                n += 1;
            }
            Some("validate" | "engine") => assert!(
                p.with_extension("json").is_file(),
                "{} has no input",
                p.display()
            ),
            _ => panic!("unexpected file {}", p.display()),
        }
    }
    assert!(n > 0);
}
