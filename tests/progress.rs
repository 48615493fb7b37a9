//! Progress on a terminal: every load draws a bar on stderr (rows, rows/s, the time left, the
//! tables or warehouses done); nothing when stderr is not a terminal, and nothing in a
//! personality's voice (sysbench prints what sysbench prints).

use crate::util::*;

/// What a terminal showed while dbsweep ran `args` on it (a pseudo-terminal from util-linux's
/// `script`); fails the test if the command failed.
fn on_terminal(args: &[&str]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("dbsweep");
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line = std::iter::once(quote(&bin.display().to_string()))
        .chain(args.iter().map(|a| quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?} failed on a terminal:\n{shown}"
    );
    shown
}

/// The loads of every family, each with what its bar names as its jobs.
fn loads(t: &Scratch) -> Vec<(Vec<String>, &'static str)> {
    let target = t.target();
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            words(&[
                "prepare",
                "oltp_read_only",
                "--table-size",
                "200000",
                "--target",
                &target,
            ]),
            "tables",
        ),
        (
            words(&["tpcc", "prepare", "--warehouses", "1", "--target", &target]),
            "warehouses",
        ),
        (
            words(&[
                "prepare",
                "linkbench_synthetic",
                "--nodes",
                "20000",
                "--target",
                &target,
            ]),
            "chunks of nodes",
        ),
        (
            words(&[
                "prepare",
                "ibench_insert",
                "--table-size",
                "50000",
                "--target",
                &target,
            ]),
            "tables",
        ),
    ]
}

#[test]
fn every_load_shows_its_progress_on_a_terminal_and_only_there() {
    for (args, jobs) in loads(&Scratch::new()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let shown = on_terminal(&args);
        assert!(
            shown.contains("loading [") && shown.contains(" rows/s, eta ") && shown.contains(jobs),
            "{args:?} drew no bar with rows, rows/s, the time left and its {jobs} on a terminal:\n{shown}"
        );
    }
    for (args, _) in loads(&Scratch::new()) {
        let out = dbsweep()
            .args(&args)
            .assert()
            .success()
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("loading [") && !stderr.contains("rows/s, eta"),
            "{args:?} drew a bar where stderr is not a terminal:\n{stderr}"
        );
    }
}

#[test]
fn the_sysbench_personality_draws_no_bar_on_a_terminal() {
    let t = Scratch::new();
    let target = format!("--target={}", t.target());
    let shown = on_terminal(&[
        "sysbench",
        "oltp_read_only",
        "--table-size=200000",
        &target,
        "prepare",
    ]);
    assert!(
        shown.contains("Inserting 200000 records into 'sbtest1'"),
        "{shown}"
    );
    assert!(
        !shown.contains("loading ["),
        "sysbench's voice drew a bar:\n{shown}"
    );
}
