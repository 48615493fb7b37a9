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
