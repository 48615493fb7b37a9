//! sysbench 1.0.20's `--help` and its tests' `help`, as its suite reads them: the sections, the
//! option tables (sysbench's names, kinds, descriptions and defaults, which drivers grep) and
//! the lists of drivers and tests, with dbsweep's own options in a section of their own where
//! no reader of sysbench's text looks (between the drivers' options and the tests).

use std::fmt::Write as _;

/// What an option takes, as sysbench's tables show it after the name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A number (`=N`).
    Num,
    /// A string (`=STRING`).
    Str,
    /// A size with a unit (`=SIZE`).
    Size,
    /// A comma-separated list (`=[LIST,...]`).
    List,
    /// on or off (`[=on|off]`).
    Bool,
    /// A file's name (`=FILENAME`).
    File,
    /// A URL (dbsweep's `--target`).
    Url,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Num => "=N",
            Kind::Str => "=STRING",
            Kind::Size => "=SIZE",
            Kind::List => "=[LIST,...]",
            Kind::Bool => "[=on|off]",
            Kind::File => "=FILENAME",
            Kind::Url => "=URL",
        }
    }
}

/// One option of a table: its name, kind, description and default (None: no default shown).
pub type Opt = (&'static str, Kind, &'static str, Option<&'static str>);

/// An option table as sysbench prints it: each `--name` and its kind padded to the widest,
/// then the description and the default in brackets.
pub fn table(opts: &[Opt]) -> String {
    let heads: Vec<String> = opts
        .iter()
        .map(|(n, k, _, _)| format!("--{n}{}", k.suffix()))
        .collect();
    let width = heads.iter().map(String::len).max().unwrap_or(0);
    let mut s = String::new();
    for (head, (_, _, desc, default)) in heads.iter().zip(opts) {
        let _ = write!(s, "  {head:<width$} {desc}");
        if let Some(d) = default {
            let _ = write!(s, " [{d}]");
        }
        s.push('\n');
    }
    s
}

/// sysbench's general options.
pub const GENERAL: &[Opt] = &[
    ("threads", Kind::Num, "number of threads to use", Some("1")),
    (
        "events",
        Kind::Num,
        "limit for total number of events",
        Some("0"),
    ),
    (
        "time",
        Kind::Num,
        "limit for total execution time in seconds",
        Some("10"),
    ),
    (
        "forced-shutdown",
        Kind::Str,
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
        Some("off"),
    ),
    (
        "thread-stack-size",
        Kind::Size,
        "size of stack per thread",
        Some("64K"),
    ),
    (
        "rate",
        Kind::Num,
        "average transactions rate. 0 for unlimited rate",
        Some("0"),
    ),
    (
        "report-interval",
        Kind::Num,
        "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports",
        Some("0"),
    ),
    (
        "report-checkpoints",
        Kind::List,
        "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default.",
        Some(""),
    ),
    (
        "debug",
        Kind::Bool,
        "print more debugging info",
        Some("off"),
    ),
    (
        "validate",
        Kind::Bool,
        "perform validation checks where possible",
        Some("off"),
    ),
    ("help", Kind::Bool, "print help and exit", Some("off")),
    ("version", Kind::Bool, "print version and exit", Some("off")),
    (
        "config-file",
        Kind::File,
        "File containing command line options",
        None,
    ),
    (
        "tx-rate",
        Kind::Num,
        "deprecated alias for --rate",
        Some("0"),
    ),
    (
        "max-requests",
        Kind::Num,
        "deprecated alias for --events",
        Some("0"),
    ),
    (
        "max-time",
        Kind::Num,
        "deprecated alias for --time",
        Some("0"),
    ),
    (
        "num-threads",
        Kind::Num,
        "deprecated alias for --threads",
        Some("1"),
    ),
];

/// The pseudo-random numbers generator's options.
pub const RAND: &[Opt] = &[
    (
        "rand-type",
        Kind::Str,
        "random numbers distribution {uniform,gaussian,special,pareto}",
        Some("special"),
    ),
    (
        "rand-spec-iter",
        Kind::Num,
        "number of iterations used for numbers generation",
        Some("12"),
    ),
    (
        "rand-spec-pct",
        Kind::Num,
        "percentage of values to be treated as 'special' (for special distribution)",
        Some("1"),
    ),
    (
        "rand-spec-res",
        Kind::Num,
        "percentage of 'special' values to use (for special distribution)",
        Some("75"),
    ),
    (
        "rand-seed",
        Kind::Num,
        "seed for random number generator. When 0, the current time is used as a RNG seed.",
        Some("0"),
    ),
    (
        "rand-pareto-h",
        Kind::Num,
        "parameter h for pareto distribution",
        Some("0.2"),
    ),
];

/// The log's options: the verbosity, then the report's.
pub const LOG: &[Opt] = &[(
    "verbosity",
    Kind::Num,
    "verbosity level {5 - debug, 0 - only critical messages}",
    Some("3"),
)];
pub const REPORT: &[Opt] = &[
    (
        "percentile",
        Kind::Num,
        "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations",
        Some("95"),
    ),
    (
        "histogram",
        Kind::Bool,
        "print latency histogram in report",
        Some("off"),
    ),
];

/// The general database options.
pub const DB: &[Opt] = &[
    (
        "db-driver",
        Kind::Str,
        "specifies database driver to use ('help' to get list of available drivers)",
        Some("mysql"),
    ),
    (
        "db-ps-mode",
        Kind::Str,
        "prepared statements usage mode {auto, disable}",
        Some("auto"),
    ),
    (
        "db-debug",
        Kind::Bool,
        "print database-specific debug information",
        Some("off"),
    ),
];

/// The MySQL driver's options.
pub const MYSQL: &[Opt] = &[
    (
        "mysql-host",
        Kind::List,
        "MySQL server host",
        Some("localhost"),
    ),
    ("mysql-port", Kind::List, "MySQL server port", Some("3306")),
    ("mysql-socket", Kind::List, "MySQL socket", None),
    ("mysql-user", Kind::Str, "MySQL user", Some("sbtest")),
    ("mysql-password", Kind::Str, "MySQL password", Some("")),
    ("mysql-db", Kind::Str, "MySQL database name", Some("sbtest")),
    (
        "mysql-ssl",
        Kind::Bool,
        "use SSL connections, if available in the client library",
        Some("off"),
    ),
    (
        "mysql-ssl-cipher",
        Kind::Str,
        "use specific cipher for SSL connections",
        Some(""),
    ),
    (
        "mysql-compression",
        Kind::Bool,
        "use compression, if available in the client library",
        Some("off"),
    ),
    (
        "mysql-debug",
        Kind::Bool,
        "trace all client library calls",
        Some("off"),
    ),
    (
        "mysql-ignore-errors",
        Kind::List,
        "list of errors to ignore, or \"all\"",
        Some("1213,1020,1205"),
    ),
    (
        "mysql-dry-run",
        Kind::Bool,
        "Dry run, pretend that all MySQL client API calls are successful without executing them",
        Some("off"),
    ),
];

/// The PostgreSQL driver's options.
pub const PGSQL: &[Opt] = &[
    (
        "pgsql-host",
        Kind::Str,
        "PostgreSQL server host",
        Some("localhost"),
    ),
    (
        "pgsql-port",
        Kind::Num,
        "PostgreSQL server port",
        Some("5432"),
    ),
    ("pgsql-user", Kind::Str, "PostgreSQL user", Some("sbtest")),
    ("pgsql-password", Kind::Str, "PostgreSQL password", Some("")),
    (
        "pgsql-db",
        Kind::Str,
        "PostgreSQL database name",
        Some("sbtest"),
    ),
];

/// dbsweep's own options that a sysbench command line may carry too.
const OWN: &[Opt] = &[
    (
        "target",
        Kind::Url,
        "the database as a URL (sqlite://, postgres://, mysql://), in place of the driver options",
        None,
    ),
    (
        "output",
        Kind::File,
        "write dbsweep's results file of a run here (none by default)",
        None,
    ),
];

/// sysbench's tests written in C, with their descriptions (dbsweep runs each).
pub const TESTS: &[(&str, &str)] = &[
    ("fileio", "File I/O test"),
    ("cpu", "CPU performance test"),
    ("memory", "Memory functions speed test"),
    ("threads", "Threads subsystem performance test"),
    ("mutex", "Mutex performance test"),
];

/// Every option sysbench itself knows before a test is named: the general, generator, log,
/// report, database and drivers' options.
pub fn general_names() -> impl Iterator<Item = &'static str> {
    [GENERAL, RAND, LOG, REPORT, DB, MYSQL, PGSQL]
        .into_iter()
        .flatten()
        .map(|(n, _, _, _)| *n)
}

/// `sysbench --help`.
pub fn usage() -> String {
    let mut s = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n",
    );
    let _ = write!(s, "General options:\n{}\n", table(GENERAL));
    let _ = write!(
        s,
        "Pseudo-Random Numbers Generator options:\n{}\n",
        table(RAND)
    );
    let _ = write!(s, "Log options:\n{}\n{}\n", table(LOG), table(REPORT));
    let _ = write!(s, "General database options:\n\n{}\n\n", table(DB));
    s.push_str(
        "Compiled-in database drivers:\n  mysql - MySQL driver\n  pgsql - PostgreSQL driver\n\n",
    );
    let _ = write!(s, "mysql options:\n{}\n", table(MYSQL));
    let _ = write!(s, "pgsql options:\n{}\n", table(PGSQL));
    let _ = write!(
        s,
        "dbsweep options (this sysbench is dbsweep {}; `dbsweep run --help` lists the rest):\n{}\n",
        env!("CARGO_PKG_VERSION"),
        table(OWN)
    );
    s.push_str("Compiled-in tests:\n");
    for (name, what) in TESTS {
        let _ = writeln!(s, "  {name} - {what}");
    }
    s.push_str("\nSee 'sysbench <testname> help' for a list of options for each test.\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_pads_every_name_to_the_widest_and_shows_defaults_in_brackets() {
        let t = table(&[
            ("a", Kind::Num, "first", Some("1")),
            ("long-name", Kind::Bool, "second", None),
        ]);
        assert_eq!(
            t,
            "  --a=N                first [1]\n  --long-name[=on|off] second\n"
        );
    }

    #[test]
    fn the_usage_lists_the_drivers_and_the_tests_in_sections_that_end_with_a_blank_line() {
        let u = usage();
        let section = |head: &str| -> Vec<String> {
            u.lines()
                .skip_while(|l| *l != head)
                .skip(1)
                .take_while(|l| !l.is_empty())
                .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(section("Compiled-in database drivers:"), ["mysql", "pgsql"]);
        assert_eq!(
            section("Compiled-in tests:"),
            ["fileio", "cpu", "memory", "threads", "mutex"]
        );
        assert!(u.starts_with("Usage:\n"));
        assert!(u.contains(
            "  --mysql-ignore-errors=[LIST,...] list of errors to ignore, or \"all\" [1213,1020,1205]\n"
        ));
    }
}
