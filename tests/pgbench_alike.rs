//! The pgbench link against the real pgbench 15, command line by command line: what a driver
//! reads (the exit status, stdout and stderr, the files left behind) must be the same. The
//! cases are those pgbench's own TAP suite checks (written here afresh): the option and script
//! errors it reports before connecting, and a custom script's `debug()` values under
//! `--random-seed`, which pgbench's random sequence makes exact.

use std::path::Path;
use std::process::Command;

use dbsweep::server::ServerKind;

use crate::util::dbsweep;
use crate::util::{Scratch, start};

const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

/// Exit status, stdout and stderr of `bin args` in `dir`, with the program's own path written
/// as `pgbench` (getopt names its program by the path it was run as).
fn outcome(bin: &Path, dir: &Path, args: &[String], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("DBSWEEP_RESULTS_DIR")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let path = bin.to_string_lossy().to_string();
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&path, "pgbench");
    (
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr),
    )
}

/// The files in `dir`, by name.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

/// A managed PostgreSQL and a scratch directory holding a `pgbench` link to dbsweep: what each
/// comparison with a server runs beside (the scratch and the server live as long as it).
struct Beside {
    _s: Scratch,
    _server: dbsweep::server::ManagedServer,
    dir: std::path::PathBuf,
    link: std::path::PathBuf,
    port: String,
}

impl Beside {
    fn new() -> Beside {
        let s = Scratch::new();
        let server = start(ServerKind::Postgres);
        let dir = s.path("");
        let link = dir.join("pgbench");
        std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
        let port = server.port.to_string();
        Beside {
            _s: s,
            _server: server,
            dir,
            link,
            port,
        }
    }
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn option_and_script_errors_are_pgbenchs_to_the_byte() {
    let s = Scratch::new();
    let dir = s.path("");
    let link = dir.join("pgbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    let work = s.path("work");
    std::fs::create_dir(&work).unwrap();
    // No server anywhere: a line that connected would fail differently in each tool.
    let env = [("PGHOST", "/nonexistent"), ("PGPORT", "1")];
    let mut cases: Vec<Vec<String>> = [
        "--bad-option",
        "-i -S",
        "-S -F 90",
        "-I dtg",
        "--progress-timestamp",
        "--random-seed=one",
        "-b se@-1",
        "--builtin=select-only@one",
        "--sampling-rate=0",
        "-c three",
        "-i -I dta",
        "a b",
        // A host name that does not resolve: libpq's words alone.
        "-h no-such-host.invalid -n -t 1",
    ]
    .iter()
    .map(|c| words(c))
    .collect();
    cases.push(words(&"-S ".repeat(129)));
    // Scripts pgbench refuses when it reads them.
    for (name, text) in [
        ("if-noendif.sql", "\\if 1"),
        ("elif-noif.sql", "\\elif 1"),
        ("else-else.sql", "\\if 1\n\\else\n\\else\n\\endif"),
        ("if-bad.sql", "\\if\n\\endif\n"),
        ("else-bad.sql", "\\if 0\n\\else BAD\n\\endif\n"),
        ("least.sql", "\\set i least()\n"),
        ("hash.sql", "\\set i hash(1,2,3)\n"),
        ("permute.sql", "\\set i permute(1)\n"),
        ("bigint.sql", "\\set i 100000000000000000000\n"),
        ("double.sql", "\\set d 1.0E309\n"),
        ("op.sql", "\\set i 1 +\n"),
        ("nofunc.sql", "\\set i noSuchFunction()\n"),
        ("case.sql", "\\set i CASE TRUE THEN 1 ELSE 0 END\n"),
        ("gset.sql", "\\gset\n"),
        ("sleep.sql", "\\sleep too many args\n"),
        ("sleep-unit.sql", "\\sleep 1 xyz\n"),
        ("sleep-ms.sql", "\\sleep 2m\n"),
        ("sleep-word.sql", "\\sleep one\n"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        cases.push(vec!["-f".into(), path.to_string_lossy().to_string()]);
    }
    for args in &cases {
        let theirs = outcome(Path::new(PGBENCH), &work, args, &env);
        let ours = outcome(&link, &work, args, &env);
        assert_eq!(ours, theirs, "pgbench {args:?}");
        assert_ne!(theirs.0, 0, "pgbench {args:?} refused nothing");
    }
    assert!(files(&work).is_empty(), "{:?}", files(&work));
}

/// A script of pgbench's functions, each value printed by debug(): with one seed, the same
/// values from both tools (the random draws, the hashes, the permutation, the types).
const FUNCTIONS: &str = r"\set u debug(random(10, 19))
\set e debug(random_exponential(100, 199, 10.0))
\set g debug(random_gaussian(1000, 1999, 10.0))
\set z debug(random_zipfian(1, 9, 1.3))
\set p debug(permute(7, 1000))
\set q debug(permute(0, 10000, 5432))
\set h debug(hash(10, 5432))
\set f debug(hash_fnv1a(10, 5432))
\set d debug(hash(10) = hash(10, :default_seed))
\set x debug(least(-5.18, .0E0, 1.0/0) * -3.3)
\set y debug(pow(2.0, 10) + int(7.5) + 1/3.0)
\set n debug(NULL + 1)
\set b debug(:n0 IS NULL AND 1 NOTNULL AND NOT :t)
\set c debug(CASE WHEN 1 THEN 1.5e300 * 1e10 END)
\set r debug(:random_seed)
SELECT :u, :x, :n, :b;
";

#[test]
fn a_seeded_scripts_values_are_pgbenchs() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    let script = dir.join("functions.sql");
    std::fs::write(&script, FUNCTIONS).unwrap();
    for clients in ["1", "3"] {
        let args: Vec<String> = [
            "-h",
            "127.0.0.1",
            "-p",
            port,
            "-U",
            "sbtest",
            "-n",
            "--random-seed=5432",
            "-c",
            clients,
            "-t",
            "1",
            "-Dn0=null",
            "-Dt=of",
            "-f",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([script.to_string_lossy().to_string(), "sbtest".into()])
        .collect();
        let theirs = outcome(Path::new(PGBENCH), dir, &args, &[]);
        let ours = outcome(link, dir, &args, &[]);
        assert_eq!(theirs.0, 0, "{}", theirs.2);
        assert_eq!(ours.0, 0, "{}", ours.2);
        // Each client's lines in order (clients run at once: their lines interleave).
        let by_client = |err: &str| -> Vec<String> {
            let mut lines: Vec<String> = err.lines().map(String::from).collect();
            lines.sort();
            lines
        };
        let (a, b) = (by_client(&theirs.2), by_client(&ours.2));
        assert!(
            a.iter().filter(|l| l.starts_with("debug(")).count() >= 15,
            "{a:?}"
        );
        assert_eq!(b, a, "{clients} client(s)");
    }
    assert_eq!(
        files(dir),
        ["functions.sql", "pgbench"],
        "files left in the working directory"
    );
}

/// `-d`, pgbench's debugging lines, in each query mode: where it connects, each client's
/// script, meta-commands, what it prepares and sends (the SQL with the seeded values in it,
/// with `$1`, or the prepared statement's name), the same lines as pgbench's but for how often
/// a client says it is receiving (once per wait for an answer that is not in yet).
#[test]
fn debug_lines_are_pgbenchs_in_every_query_mode() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    let at = ["-h", "127.0.0.1", "-p", port, "-U", "sbtest"];
    let init: Vec<String> = at
        .iter()
        .chain(&["-i", "-q", "sbtest"])
        .map(|a| a.to_string())
        .collect();
    assert_eq!(outcome(Path::new(PGBENCH), dir, &init, &[]).0, 0);
    for mode in ["simple", "extended", "prepared"] {
        let args: Vec<String> = at
            .iter()
            .chain(&[
                "-n",
                "-c",
                "2",
                "-t",
                "2",
                "--random-seed=7",
                "-b",
                "tpcb-like",
            ])
            .chain(&["-M", mode, "-d", "sbtest"])
            .map(|a| a.to_string())
            .collect();
        let theirs = outcome(Path::new(PGBENCH), dir, &args, &[]);
        let ours = outcome(link, dir, &args, &[]);
        assert_eq!(
            (theirs.0, ours.0),
            (0, 0),
            "{mode}: {}\n{}",
            theirs.2,
            ours.2
        );
        // Each client's lines in order, the clients' interleaving left out.
        let lines = |err: &str| -> Vec<String> {
            let mut v: Vec<String> = err
                .lines()
                .filter(|l| l.starts_with("pgbench: ") && !l.ends_with(" receiving"))
                .map(String::from)
                .collect();
            v.sort();
            v
        };
        let (a, b) = (lines(&theirs.2), lines(&ours.2));
        assert!(
            a.iter().any(|l| l.contains("client 1 sending")),
            "{mode}: {a:?}"
        );
        assert_eq!(b, a, "{mode}");
        assert!(ours.2.contains("pgbench: client 1 receiving"), "{mode}");
    }
}

/// A script that ends inside a transaction block (`BEGIN;SELECT 1;`): its first run is
/// counted, then the client aborts with pgbench's line, and the run exits 2, as pgbench's.
#[test]
fn a_script_left_inside_a_transaction_aborts_its_client_as_pgbench_does() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    std::fs::write(dir.join("open.sql"), "BEGIN;SELECT 1;").unwrap();
    let args = words(&format!(
        "-h 127.0.0.1 -p {port} -U sbtest -n -f open.sql sbtest"
    ));
    let theirs = outcome(Path::new(PGBENCH), dir, &args, &[]);
    let ours = outcome(link, dir, &args, &[]);
    // What does not depend on the machine's speed or on which program it is.
    let kept = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| {
                !["latency", "tps", "initial connection", "pgbench ("]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(String::from)
            .collect()
    };
    assert_eq!(theirs.0, 2, "{}", theirs.2);
    assert_eq!(ours.0, theirs.0, "{}", ours.2);
    assert_eq!(kept(&ours.1), kept(&theirs.1));
    assert!(theirs.1.contains("processed: 1/10"), "{}", theirs.1);
    assert_eq!(ours.2, theirs.2);
}

/// PGOPTIONS reaches the session, as libpq sends it: a script that fails unless the session
/// runs at repeatable read passes under `PGOPTIONS="-c default_transaction_isolation=..."` and
/// fails without it, through pgbench and through the link alike.
#[test]
fn pgoptions_set_the_sessions_parameters_as_libpq_sends_them() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    std::fs::write(
        dir.join("iso.sql"),
        "SELECT 1/(current_setting('transaction_isolation') = 'repeatable read')::int;\n",
    )
    .unwrap();
    let args = words(&format!(
        "-h 127.0.0.1 -p {port} -U sbtest -n -t 1 -f iso.sql sbtest"
    ));
    let rr = [(
        "PGOPTIONS",
        "-c default_transaction_isolation=repeatable\\ read",
    )];
    for (env, code) in [(&rr[..], 0), (&[][..], 2)] {
        let theirs = outcome(Path::new(PGBENCH), dir, &args, env);
        let ours = outcome(link, dir, &args, env);
        assert_eq!(theirs.0, code, "{env:?}: {}", theirs.2);
        assert_eq!(ours.0, code, "{env:?}: {}", ours.2);
    }
}

/// `\gset` of a column whose name no variable can have (`?column?`, `bad name!`, a prefix
/// before a name with a space): the command fails as pgbench's does, with its two lines.
#[test]
fn gset_into_a_name_no_variable_can_have_fails_as_pgbench_does() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    for (i, script) in [
        "SELECT 1 \\gset\n",
        "SELECT 1 AS \"bad name!\" \\gset\n",
        "SELECT 1 AS ok, 2 AS \"x y\" \\gset p_\n",
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(dir.join(format!("g{i}.sql")), script).unwrap();
        let args = words(&format!(
            "-h 127.0.0.1 -p {port} -U sbtest -n -t 1 -M prepared -f g{i}.sql sbtest"
        ));
        let theirs = outcome(Path::new(PGBENCH), dir, &args, &[]);
        let ours = outcome(link, dir, &args, &[]);
        assert_eq!(theirs.0, 2, "{script}: {}", theirs.2);
        assert_eq!((ours.0, &ours.2), (theirs.0, &theirs.2), "{script}");
    }
}

/// Scripts that fail while they run, in each query mode: what pgbench prints (the server's
/// whole message as libpq words it: the statement's line and caret where libpq has the text,
/// DETAIL, and CONTEXT with the bound parameters) and its exit status, byte for byte.
#[test]
fn a_running_scripts_failures_are_pgbenchs_to_the_byte() {
    let beside = Beside::new();
    let Beside {
        dir, link, port, ..
    } = &beside;
    let many: Vec<&str> = vec![":one"; 256];
    let scripts = [
        "select '1' as one \\gset\nSELECT 1 / (random() / 2)::int, :one::int, :two::int;\n".to_string(),
        "select '{ invalid ' as value \\gset\nselect column1::jsonb from (values (:value), (:value)) as q;\n".into(),
        "select '1a' as v \\gset\nselect :client_id::int2, :v::int2;\n".into(),
        "select 1 from no_such_table where x = :client_id;\n".into(),
        "selec 1;\n".into(),
        "COPY (SELECT 1) TO STDOUT;\n".into(),
        format!("SELECT {}, 1/0;\n", many.join(", ")),
        "\\set . 1\n".into(),
        "\\setshell v true\n".into(),
        "\\set n 2\n\\sleep :nope\n".into(),
    ];
    // The server says the bound parameters of a failed statement when asked to.
    let env = [("PGOPTIONS", "-c log_parameter_max_length_on_error=-1")];
    for (i, script) in scripts.iter().enumerate() {
        std::fs::write(dir.join(format!("f{i}.sql")), script).unwrap();
        for mode in ["simple", "extended", "prepared"] {
            let args = words(&format!(
                "-h 127.0.0.1 -p {port} -U sbtest -n -t 1 -D one=1 -M {mode} -f f{i}.sql sbtest"
            ));
            let theirs = outcome(Path::new(PGBENCH), dir, &args, &env);
            let ours = outcome(link, dir, &args, &env);
            assert_ne!(theirs.0, 0, "{mode} {script}: {}", theirs.2);
            assert_eq!((ours.0, &ours.2), (theirs.0, &theirs.2), "{mode} {script}");
        }
    }
}

#[test]
fn pgbench_drop_in_judges_every_value_as_pgbench_does_before_connecting() {
    let s = Scratch::new();
    let empty = s.path("empty.sql");
    std::fs::write(&empty, "").unwrap();
    let cases: &[&[&str]] = &[
        &["-R", "-1"],
        &["-R", "0"],
        &["-R", "abc"],
        &["-P", "-1"],
        &["-P", "abc"],
        &["-c", "0"],
        &["-c", "abc"],
        &["-c", "2147483648"],
        &["-j", "0"],
        &["-T", "-5"],
        &["-t", "0"],
        &["-s", "0"],
        &["-D", "foo"],
        &["-D", "=5"],
        &["-D", "x="],
        &["-D", "1x=3"],
        &["-i", "-I", ""],
        &["-i", "-I", "xyz"],
        &["-i", "-F", "5"],
        &["--random-seed=abc"],
        &["--aggregate-interval=0", "-l"],
    ];
    for args in cases {
        // Nothing listens there: a message about connecting means the value was not judged.
        let theirs = std::process::Command::new(PGBENCH)
            .args(*args)
            .args(["-h", "/nonexistent"])
            .output()
            .expect("pgbench is installed (scripts/test installs it)");
        let mine = dbsweep()
            .arg("pgbench")
            .args(*args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        let first = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(first(&mine), first(&theirs), "{args:?}");
        assert_eq!(mine.status.code(), theirs.status.code(), "{args:?}");
    }
    // Failing to connect is an early error: exit 1, as pgbench documents, with or without
    // its builtins and vacuum.
    let script = s.path("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    for args in [vec![], vec!["-n", "-f", script.to_str().unwrap()]] {
        let mine = dbsweep()
            .arg("pgbench")
            .args(&args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        let theirs = std::process::Command::new(PGBENCH)
            .args(&args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        assert_eq!(theirs.status.code(), Some(1));
        assert_eq!(mine.status.code(), Some(1), "{args:?}");
    }
    // --random-seed takes a negative number as strtoull does: no usage error about it, and
    // pgbench's info line with the seed it made of it.
    let mine = dbsweep()
        .args(["pgbench", "--random-seed=-1", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let theirs = std::process::Command::new(PGBENCH)
        .args(["--random-seed=-1", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&mine.stderr);
    assert!(!err.contains("unexpected argument"), "{err}");
    assert_eq!(
        err.lines().next(),
        String::from_utf8_lossy(&theirs.stderr).lines().next()
    );
    assert_eq!(
        err.lines().next(),
        Some("pgbench: setting random seed to 18446744073709551615")
    );
    // -f - reads the script from standard input.
    let mine = dbsweep()
        .args(["pgbench", "-n", "-f", "-", "-h", "/nonexistent"])
        .write_stdin("")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&mine.stderr).contains("empty command list for script \"-\""),
        "{}",
        String::from_utf8_lossy(&mine.stderr)
    );
}

#[test]
fn pgbench_values_keep_their_text_and_every_command_past_the_256th_is_timed() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let out = s.path("shell.out");
    let script = s.path("t.sql");
    let mut text = format!(
        "SELECT '1.50' AS g \\gset\n\\shell echo :x :y :g > {}\n",
        out.display()
    );
    for _ in 0..300 {
        text.push_str("SELECT 1;\n");
    }
    std::fs::write(&script, text).unwrap();
    let res = s.path("r.json");
    let r = s
        .line(&["run", "pgbench", "--script", script.to_str().unwrap()])
        .args(["--define", "x=007", "--define", "y=1e400"])
        .args(["--events", "3", "--time", "0"])
        .quiet()
        .output(&res)
        .results();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().trim(),
        "007 1e400 1.50",
        "values are sent as they came"
    );
    // 302 commands, each timed in every one of the 3 transactions.
    let statements = r["statements"].as_array().unwrap();
    assert_eq!(statements.len(), 302);
    for st in statements {
        assert_eq!(st["count"], 3, "{st}");
    }
}

#[test]
fn pgbench_scripts_all_of_weight_zero_are_refused() {
    let out = dbsweep()
        .args(["pgbench", "-b", "select-only@0", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let theirs = std::process::Command::new(PGBENCH)
        .args(["-b", "select-only@0", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("total script weight must not be zero"),
        "{err}"
    );
    assert_eq!(out.status.code(), theirs.status.code());
}
