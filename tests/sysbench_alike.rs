//! The sysbench link against the real sysbench 1.0.20, command line by command line: what a
//! driver reads (the exit status, the output with its figures masked, the files left behind)
//! must be the same. The cases are those sysbench's own cram suite checks (written here
//! afresh): its refusals and their exit status, `--help`'s sections, the tests written in C
//! (cpu, memory, threads, mutex and fileio's prepare, run and cleanup), `--verbosity`, a script
//! on standard input and a script's options, and the Lua SQL API's answers and failures (on
//! managed PostgreSQL and MariaDB servers, the only tests here that need one).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::Scratch;

const SYSBENCH: &str = "/usr/bin/sysbench";

/// Exit status and output (stdout then stderr) of `bin args` in `dir`, `stdin` fed in, with
/// the figures masked and the first line's self-description (sysbench names its LuaJIT,
/// dbsweep itself) cut at the version.
fn outcome(bin: &Path, dir: &Path, args: &[String], stdin: &str) -> (i32, String) {
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("DBSWEEP_RESULTS_DIR")
        .env_remove("LUA_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A tool that refuses its words exits without reading its input: the pipe it closed is
    // not the test's failure.
    match child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.unwrap(),
    }
    let out = child.wait_with_output().unwrap();
    // A figure and the spaces that pad it to its column.
    let figures = regex::Regex::new(r" *[0-9]+(\.[0-9]+)?").unwrap();
    let text = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text: Vec<String> = text
        .lines()
        .map(|l| {
            let l = if l.starts_with("sysbench 1.0.20 (") {
                "sysbench 1.0.20"
            } else {
                l
            };
            figures.replace_all(l, " N").into_owned()
        })
        .collect();
    (out.status.code().unwrap_or(-1), text.join("\n"))
}

/// The files in `dir` with their sizes.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut names: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    names.sort();
    names
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Runs each case (its words and standard input) through both tools, each in a directory of its
/// own holding the same files, and says where they differ.
fn compare(cases: &[(&str, &str)], setup: &[(&str, &str)]) {
    let s = Scratch::new();
    let link = s.path("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    let (real_dir, link_dir) = (s.path("real"), s.path("link"));
    for d in [&real_dir, &link_dir] {
        std::fs::create_dir(d).unwrap();
        for (name, text) in setup {
            std::fs::write(d.join(name), text).unwrap();
        }
    }
    let mut differ = Vec::new();
    for (line, stdin) in cases {
        let args = words(line);
        let real = outcome(Path::new(SYSBENCH), &real_dir, &args, stdin);
        let ours = outcome(&link, &link_dir, &args, stdin);
        if real != ours {
            let first = real
                .1
                .lines()
                .zip(ours.1.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("first difference:\n  sysbench: {a}\n  link:     {b}"))
                .unwrap_or_else(|| "one output is longer".into());
            differ.push(format!(
                "sysbench {line}: {first}\n  sysbench [{}]:\n{}\n  link [{}]:\n{}",
                real.0, real.1, ours.0, ours.1
            ));
        }
        let (real_files, our_files) = (files(&real_dir), files(&link_dir));
        if real_files != our_files {
            differ.push(format!(
                "sysbench {line}: files left: sysbench {real_files:?}, link {our_files:?}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}

#[test]
fn refusals_help_and_the_tests_written_in_c_are_sysbenchs() {
    compare(
        &[
            ("foo bar", ""),
            ("foo bar baz", ""),
            ("fileio", ""),
            ("run", "print('x')"),
            ("help", ""),
            ("--version", ""),
            ("cpu help", ""),
            ("memory help", ""),
            ("threads help", ""),
            ("mutex help", ""),
            ("fileio help", ""),
            ("cpu prepare", ""),
            ("threads cleanup", ""),
            ("cpu frobnicate", ""),
            ("fileio --invalid-option prepare", ""),
            ("memory --memory-block-size=3 run", ""),
            ("memory --memory-block-size=-1 run", ""),
            ("--verbosity=1 --rate=2000000000 cpu run", ""),
            ("cpu --cpu-max-prime=1000 --events=100 --threads=2 run", ""),
            ("threads --events=10 --threads=2 run", ""),
            ("mutex --events=10 --threads=2 --mutex-locks=100 run", ""),
            (
                "memory --memory-block-size=4K --memory-total-size=64M --threads=2 --memory-scope=local --memory-oper=read run",
                "",
            ),
        ],
        &[],
    );
}

#[test]
fn fileio_prepares_runs_and_cleans_up_as_sysbench_does() {
    let args = "fileio --file-num=4 --file-total-size=2M";
    let lines: Vec<String> = [
        format!("{args} prepare"),
        format!("{args} run"),
        format!("{args} --events=150 --file-test-mode=rndrw run"),
        format!("{args} --events=150 --file-test-mode=seqrd run"),
        format!("{args} --events=150 --file-test-mode=rndwr --file-fsync-mode=fdatasync run"),
        format!("{args} --events=20 --file-test-mode=seqrewr --file-merged-requests=2 run"),
        format!("{args} --events=20 --file-test-mode=foo run"),
        format!("{args} --events=200 --file-io-mode=async --file-test-mode=rndrw run"),
        format!(
            "{args} --events=50 --file-io-mode=async --file-async-backlog=4 --file-test-mode=seqrd run"
        ),
        format!("{args} --file-io-mode=async --file-async-backlog=0 --file-test-mode=rndrd run"),
        format!("{args} --events=200 --file-io-mode=mmap --file-fsync-freq=10 --file-test-mode=rndrw run"),
        format!("{args} --events=100 --file-io-mode=mmap --file-test-mode=seqrd run"),
        format!("{args} --events=100 --file-io-mode=mmap --file-fsync-all --file-test-mode=seqrewr run"),
        format!("{args} --file-io-mode=mmapx --file-test-mode=rndrd run"),
        format!("{args} cleanup"),
        format!("{args} --events=64 --file-io-mode=mmap --file-test-mode=seqwr run"),
        format!("{args} cleanup"),
        format!("{args} --validate prepare"),
        format!("{args} --validate --events=300 --file-io-mode=mmap --file-test-mode=rndrw run"),
        format!("{args} cleanup"),
        format!("{args} --validate prepare"),
        format!("{args} --validate --events=300 --file-test-mode=rndrw run"),
        format!("{args} --validate --events=100 --file-test-mode=seqrd run"),
        format!("{args} --file-extra-flags=dsync,sync prepare"),
        format!("{args} --file-num=8 --verbosity=2 --file-test-mode=rndrd --events=1 run"),
        format!("{args} cleanup"),
        format!("{args} --verbosity=2 --file-test-mode=rndrw run"),
        format!("{args} --file-num=3 --file-block-size=4097 --verbosity=2 prepare"),
        format!("{args} --file-num=3 --file-block-size=4097 --file-test-mode=seqrd --events=5 run"),
        format!("{args} --file-num=3 cleanup"),
        format!(
            "{args} --file-test-mode=seqwr --file-fsync-freq=0 --events=50 --file-fsync-all run"
        ),
        format!("{args} cleanup"),
    ]
    .to_vec();
    let cases: Vec<(&str, &str)> = lines.iter().map(|l| (l.as_str(), "")).collect();
    compare(&cases, &[]);
}

#[test]
fn scripts_on_standard_input_verbosity_and_script_options_are_sysbenchs() {
    let script = "sysbench.cmdline.options = {\n  flag = {'a flag', false},\n  n = {'a number', 7},\n  s = {'a string'},\n  l = {'a list', nil, sysbench.cmdline.ARG_LIST}\n}\nfunction prepare()\n  print(sysbench.opt.flag, sysbench.opt.n, sysbench.opt.s, #sysbench.opt.l)\nend\nfunction event()\nend\nfunction thread_init()\n  print('thread_init')\nend\n";
    compare(
        &[
            ("", "print('from stdin')"),
            ("-", "print(sysbench.version, sysbench.version_string)"),
            ("--unknown", ""),
            ("opts.lua", ""),
            ("opts.lua help", ""),
            ("opts.lua prepare", ""),
            ("opts.lua --flag --n=3 --s=x --l=a,b prepare", ""),
            ("opts.lua --flag=5 prepare", ""),
            ("--non-existing=3 opts.lua prepare", ""),
            ("opts.lua cleanup", ""),
            ("opts.lua frobnicate", ""),
            ("--verbosity=0 --events=2 opts.lua run", ""),
            ("--test=opts.lua --max-requests=1 --verbosity=0 run", ""),
            ("--events=1 noevent.lua run", ""),
        ],
        &[("opts.lua", script), ("noevent.lua", "x = 1\n")],
    );
}

#[test]
fn help_is_sysbenchs_but_for_the_section_of_dbsweeps_own_options() {
    let s = Scratch::new();
    let link = s.path("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    let dir = s.path("");
    // Between the drivers' options and the tests: where no reader of sysbench's text looks.
    let cut = |t: String| -> String {
        let start = t.find("dbsweep options").unwrap_or(t.len());
        let end = t.find("Compiled-in tests:").unwrap_or(t.len());
        if start < end {
            format!("{}{}", &t[..start], &t[end..])
        } else {
            t
        }
    };
    let real = outcome(Path::new(SYSBENCH), &dir, &words("--help"), "");
    let ours = outcome(&link, &dir, &words("--help"), "");
    assert_eq!(real.0, ours.0);
    assert!(ours.1.contains("dbsweep options"), "{}", ours.1);
    assert_eq!(cut(real.1), cut(ours.1));
}

/// `--report-checkpoints`: the whole statistics at each checkpoint, counted since the one
/// before, and the summary since the last; a checkpoint past the end is never reached; a bad
/// one is refused as sysbench refuses it. Both a test written in C and a script (its SQL
/// statistics, on `--mysql-dry-run`).
#[test]
fn report_checkpoints_are_sysbenchs() {
    compare(
        &[
            ("cpu --report-checkpoints=1 --time=2 run", ""),
            ("cpu --report-checkpoints=1,7 --time=2 --threads=2 run", ""),
            ("cpu --report-checkpoints=x --time=1 run", ""),
            (
                "oltp_read_write --mysql-dry-run --time=3 --events=0 --report-checkpoints=2,1 run",
                "",
            ),
        ],
        &[],
    );
}

/// A script's own command (`sysbench.cmdline.commands`) that raises an error, plain and
/// parallel: sysbench's FATAL line names the function it calls commands through.
#[test]
fn a_failing_custom_command_is_said_as_sysbench_says_it() {
    let script = "sysbench.cmdline.commands = {\n  boom = {function() error(\"it broke\") end},\n  pboom = {function() error(\"it broke too\") end, sysbench.cmdline.PARALLEL_COMMAND}\n}\n";
    compare(
        &[("boom.lua boom", ""), ("boom.lua pboom", "")],
        &[("boom.lua", script)],
    );
}

/// A script of the SQL API's answers and failures, as sysbench's api_sql suite checks them
/// (written here afresh): an unknown driver, a statement that cannot be prepared, a bind of a
/// type sysbench does not bind, what `bind_param` and `execute` answer, `query_row` of no row,
/// a failed statement with the error hook's descriptor, freeing a result set that is not
/// there (the repeated ALERT counted), a closed connection, the bulk API out of order; and a
/// script with no command whose top level connects. On PostgreSQL and MariaDB.
const SQL_API: &str = r#"
function sysbench.hooks.sql_error_ignorable(e)
  print("hook", tostring(e.connection), type(e.connection), e.query, e.sql_errno, e.sql_state)
end
function event()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  print(pcall(sysbench.sql.driver, "no-such-driver"))
  print(pcall(con.prepare, con, "SELECT * FROM no_such_table"))
  con:query("DROP TABLE IF EXISTS apitest")
  con:query("CREATE TABLE apitest(a INT NOT NULL, b CHAR(4))")
  local stmt = con:prepare("INSERT INTO apitest VALUES (?, ?)")
  print(stmt:bind_param())
  print(pcall(stmt.bind_create, stmt, sysbench.sql.type.TIME))
  local a = stmt:bind_create(sysbench.sql.type.INT)
  local b = stmt:bind_create(sysbench.sql.type.CHAR, 4)
  print(a, b, stmt:bind_param(a, b))
  a:set(5)
  b:set("abcdefgh")
  print(stmt:execute())
  print(con:query_row("SELECT a, b FROM apitest"))
  print(con:query_row("SELECT a FROM apitest WHERE a > 100"))
  print(pcall(function() con:query("INSERT INTO apitest VALUES (NULL, 'x')") end))
  local rs = con:query("SELECT a FROM apitest")
  con:query("DROP TABLE apitest")
  print(pcall(rs.free, rs))
  print(pcall(rs.free, rs))
  print("--")
  con:disconnect()
  print(pcall(con.query, con, "SELECT 1"))
  print(con:disconnect())
  print(pcall(function() con:bulk_insert_next("(1)") end))
end
"#;

const TOP_LEVEL_SQL: &str = r#"
local c = sysbench.sql.driver():connect()
print(c:query_row("SELECT 42"))
print(pcall(function() c:bulk_insert_next("(2)") end))
"#;

#[test]
fn the_sql_apis_answers_and_failures_are_sysbenchs() {
    use dbsweep::server::ServerKind;
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let server = crate::util::start(kind);
        let conn = crate::util::sysbench_connection(kind, &server).join(" ");
        let run = format!("--verbosity=1 --events=1 {conn} api.lua run");
        let top = format!("--verbosity=1 {conn} top.lua");
        compare(
            &[(run.as_str(), ""), (top.as_str(), "")],
            &[("api.lua", SQL_API), ("top.lua", TOP_LEVEL_SQL)],
        );
    }
}

/// A connection that cannot be opened, through the SQL API: the driver's FATAL lines (libpq's
/// words for PostgreSQL, MariaDB's connector's numbers and words for MySQL) and
/// "connection creation failed". No server is needed: nothing listens where these point.
#[test]
fn a_failed_connection_is_said_as_sysbench_says_it() {
    let script = "function event()\n  local drv = sysbench.sql.driver()\n  print(pcall(drv.connect, drv))\nend\n";
    let run = "--verbosity=1 --events=1";
    let lines = [
        format!("{run} --db-driver=pgsql --pgsql-host=no-such-host.invalid c.lua run"),
        format!(
            "{run} --db-driver=mysql --mysql-host=no-such-host.invalid --mysql-socket= c.lua run"
        ),
        format!("{run} --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=1 c.lua run"),
        format!("{run} --db-driver=mysql --mysql-socket=/nonexistent/mysqld.sock c.lua run"),
    ];
    let cases: Vec<(&str, &str)> = lines.iter().map(|l| (l.as_str(), "")).collect();
    compare(&cases, &[("c.lua", script)]);
}
