//! The house's rules, read in its source: a workload family is its folder (src/workload/NAME/)
//! and its entry in the registry (src/workload/mod.rs); its personality, where it has one, is
//! src/dropin/NAME/.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Files outside a family's folder, its personality's and the registry that still name the
/// family's module: what is left to move. The test fails when another file starts naming a
/// family, and when one of these stops (take it off the list: it only shrinks).
const STILL_OUTSIDE: &[(&str, &str)] = &[
    // The options every run shares, filed under the headings of the families that named them.
    ("pgbench", "src/cli/run.rs"),
    ("sysbench", "src/cli/run.rs"),
    // `dbsweep tpcc`'s commands.
    ("tpcc", "src/commands/tpcc.rs"),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The families' modules, as the registry's entries (`NAME: [Family, ...]`) give them.
fn registry_modules(registry: &str) -> Vec<String> {
    let start = registry
        .find("registry! {")
        .expect("src/workload/mod.rs invokes registry!");
    registry[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.trim() != "}")
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(':')?;
            (rest.trim_start().starts_with('[') && name.chars().all(|c| c.is_ascii_lowercase()))
                .then(|| name.to_string())
        })
        .collect()
}

/// Whether `text` (the file at `rel`) names module `m` of the workload families.
fn names(rel: &str, text: &str, m: &str) -> bool {
    let by_path = |prefix: &str| {
        text.match_indices(&format!("{prefix}{m}")).any(|(i, s)| {
            !text[i + s.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    by_path("workload::")
        || (rel.starts_with("src/workload/") && (by_path("super::") || by_path("super::super::")))
}

#[test]
fn a_family_is_its_folder_and_its_registry_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let registry = std::fs::read_to_string(root.join("src/workload/mod.rs")).unwrap();
    let modules = registry_modules(&registry);
    for m in [
        "sysbench",
        "ibench",
        "sqlbench",
        "pgbench",
        "linkbench",
        "tpcc",
    ] {
        assert!(
            modules.iter().any(|x| x == m),
            "the registry lists {m}: {modules:?}"
        );
        assert!(
            root.join("src/workload").join(m).is_dir(),
            "{m} is a folder"
        );
    }
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let mut found = BTreeSet::new();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(path).unwrap();
        for m in &modules {
            let own = [format!("src/workload/{m}/"), format!("src/dropin/{m}/")];
            if rel == "src/workload/mod.rs" || own.iter().any(|o| rel.starts_with(o)) {
                continue;
            }
            if names(&rel, &text, m) {
                found.insert((m.clone(), rel.clone()));
            }
        }
    }
    let expected: BTreeSet<(String, String)> = STILL_OUTSIDE
        .iter()
        .map(|(m, f)| (m.to_string(), f.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&expected).collect();
    let gone: Vec<_> = expected.difference(&found).collect();
    assert!(
        new.is_empty(),
        "files outside a family's folder that name it (move what they use into the family, or \
         ask the family through the registry): {new:?}"
    );
    assert!(
        gone.is_empty(),
        "these no longer name the family: take them off STILL_OUTSIDE: {gone:?}"
    );
}
