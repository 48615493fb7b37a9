//! The reference made from the command line's own definitions: shell completions and the
//! manual page, checked where a user meets them (bash completing a word, man rendering the
//! page).

use std::process::Command;

fn dbsweep(args: &[&str]) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash's completion of `words` (the cursor on the last) offers with dbsweep's script.
fn bash_completes(script: &str, words: &[&str]) -> Vec<String> {
    let s = crate::util::Scratch::new();
    let path = s.path("dbsweep.bash");
    std::fs::write(&path, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let n = words.len() - 1;
    let prog = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={n}; _dbsweep dbsweep '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words[n],
        words[n - 1],
    );
    let out = Command::new("bash").args(["-c", &prog]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn bash_completes_subcommands_and_their_options_from_the_definitions() {
    let script = dbsweep(&["completions", "bash"]);
    assert_eq!(bash_completes(&script, &["dbsweep", "swe"]), ["sweep"]);
    let run = bash_completes(&script, &["dbsweep", "run", "--connect-"]);
    assert!(run.contains(&"--connect-timeout".to_string()), "{run:?}");
    assert!(run.contains(&"--connect-rate".to_string()), "{run:?}");
    // zsh and fish scripts come from the same definitions.
    assert!(dbsweep(&["completions", "zsh"]).contains("#compdef dbsweep"));
    assert!(dbsweep(&["completions", "fish"]).contains("complete -c dbsweep"));
}

#[test]
fn the_manual_page_renders_with_every_subcommand_and_option() {
    let s = crate::util::Scratch::new();
    let page = s.path("dbsweep.1");
    std::fs::write(&page, dbsweep(&["man"])).unwrap();
    let out = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "sweep",
        "report",
        "compare",
        "tpcc",
        "capacity",
        "completions",
    ] {
        assert!(
            text.contains(&format!("dbsweep-{word}")),
            "no section for {word}"
        );
    }
    for option in [
        "--connect-timeout",
        "--query-timeout",
        "--target",
        "--threads",
    ] {
        assert!(text.contains(option), "no {option} in the page");
    }
}

/// `--help` groups a run's options under headings (the connection, the run, the measurement,
/// the output, and each workload family's own), `prepare --help` leaves out what only a run
/// reads, and `dbsweep --help` lists both personalities.
#[test]
fn help_groups_the_options_under_headings_and_prepare_shows_its_own() {
    let run = dbsweep(&["run", "--help"]);
    let headings: Vec<&str> = run
        .lines()
        .filter(|l| l.ends_with(':') && !l.starts_with(' '))
        .collect();
    for h in [
        "Connection:",
        "Run:",
        "Measurement:",
        "Output:",
        "TPC-C:",
        "Insert Benchmark:",
        "LinkBench:",
        "sql-bench:",
    ] {
        assert!(headings.contains(&h), "{h} not among {headings:?}");
    }
    // Each option under the heading it belongs to.
    let under = |help: &str, option: &str| -> String {
        let at = help
            .lines()
            .position(|l| l.trim_start().starts_with(option))
            .unwrap_or_else(|| panic!("{option} not in:\n{help}"));
        help.lines()
            .take(at)
            .filter(|l| l.ends_with(':') && !l.starts_with(' '))
            .last()
            .unwrap()
            .to_string()
    };
    assert_eq!(under(&run, "--target"), "Connection:");
    assert_eq!(under(&run, "--query-timeout"), "Connection:");
    assert_eq!(under(&run, "--time"), "Run:");
    assert_eq!(under(&run, "--hw-sample"), "Measurement:");
    assert_eq!(under(&run, "--output"), "Output:");
    assert_eq!(under(&run, "--small-test"), "sql-bench:");

    let prepare = dbsweep(&["prepare", "--help"]);
    for kept in [
        "--target",
        "--tables",
        "--table-size",
        "--threads",
        "--force",
        "--warehouses",
    ] {
        assert!(prepare.contains(kept), "{kept} not in:\n{prepare}");
    }
    for run_only in [
        "--time",
        "--rate",
        "--warmup",
        "--report-interval",
        "--point-selects",
        "--hw-sample",
    ] {
        assert!(!prepare.contains(run_only), "{run_only} in:\n{prepare}");
    }
    // Left out of the help, still taken.
    let s = crate::util::Scratch::new();
    let target = format!("--target=sqlite://{}", s.path("p.db").display());
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--table-size",
        "10",
        "--time",
        "1",
        &target,
    ]);

    let top = dbsweep(&["--help"]);
    for command in ["sysbench", "pgbench"] {
        assert!(
            top.lines().any(|l| l.trim_start().starts_with(command)),
            "{command} not listed in:\n{top}"
        );
    }
}
