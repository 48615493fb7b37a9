//! `--help` of the drop-in: pgbench 15's options, in its groups and with its argument names,
//! so that a user (or a script probing for an option) finds each where pgbench lists it. The
//! descriptions are dbsweep's own.

/// Each group's title and its options: (the option as written, what it does).
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "Initialization options",
        &[
            ("-i, --initialize", "create and fill pgbench's tables"),
            (
                "-I, --init-steps=[dtgGvpf]+",
                "the steps of -i, in order (default \"dtgvp\")",
            ),
            ("-F, --fillfactor=NUM", "the tables' fill factor"),
            ("-n, --no-vacuum", "leave out the VACUUM after loading"),
            ("-q, --quiet", "a progress line every 5 seconds only"),
            (
                "-s, --scale=NUM",
                "scaling factor: 100,000 accounts per unit",
            ),
            ("--foreign-keys", "add the foreign keys between the tables"),
            (
                "--index-tablespace=TABLESPACE",
                "put the primary keys in this tablespace",
            ),
            (
                "--partition-method=(range|hash)",
                "how pgbench_accounts is partitioned (default: range)",
            ),
            (
                "--partitions=NUM",
                "split pgbench_accounts in NUM partitions (default: 0)",
            ),
            (
                "--tablespace=TABLESPACE",
                "put the tables in this tablespace",
            ),
            ("--unlogged-tables", "make the tables unlogged"),
        ],
    ),
    (
        "Options to select what to run",
        &[
            (
                "-b, --builtin=NAME[@W]",
                "run built-in script NAME, weight W (default: 1; \"-b list\" lists them)",
            ),
            (
                "-f, --file=FILENAME[@W]",
                "run the script in FILENAME, weight W (default: 1)",
            ),
            (
                "-N, --skip-some-updates",
                "the simple-update script (\"-b simple-update\")",
            ),
            (
                "-S, --select-only",
                "the select-only script (\"-b select-only\")",
            ),
        ],
    ),
    (
        "Benchmarking options",
        &[
            ("-c, --client=NUM", "clients, each a session (default: 1)"),
            ("-C, --connect", "a new connection for every transaction"),
            (
                "-D, --define=VARNAME=VALUE",
                "set a variable for the scripts",
            ),
            ("-j, --jobs=NUM", "threads (default: 1)"),
            ("-l, --log", "log every transaction to a file per thread"),
            (
                "-L, --latency-limit=NUM",
                "transactions over NUM ms count as late (skipped under -R)",
            ),
            (
                "-M, --protocol=simple|extended|prepared",
                "how statements are sent (default: simple)",
            ),
            ("-n, --no-vacuum", "no VACUUM before the run"),
            ("-P, --progress=NUM", "a progress line every NUM seconds"),
            (
                "-r, --report-per-command",
                "each command's latency, failures and retries",
            ),
            ("-R, --rate=NUM", "transactions per second to aim at"),
            ("-s, --scale=NUM", "the scaling factor the summary names"),
            (
                "-t, --transactions=NUM",
                "transactions per client (default: 10)",
            ),
            ("-T, --time=NUM", "seconds to run"),
            ("-v, --vacuum-all", "VACUUM the four tables before the run"),
            (
                "--aggregate-interval=NUM",
                "log one line per NUM seconds rather than per transaction",
            ),
            (
                "--failures-detailed",
                "failures split by kind (serialization, deadlock)",
            ),
            (
                "--log-prefix=PREFIX",
                "the log files' prefix (default: \"pgbench_log\")",
            ),
            (
                "--max-tries=NUM",
                "tries of a transaction that fails to serialize or deadlocks (default: 1)",
            ),
            ("--progress-timestamp", "progress lines say the Unix time"),
            (
                "--random-seed=SEED",
                "the random generator's seed (\"time\", \"rand\" or an integer)",
            ),
            (
                "--sampling-rate=NUM",
                "the share of transactions logged (0.01: 1%)",
            ),
            ("--show-script=NAME", "print a built-in script and exit"),
            ("--verbose-errors", "say every error, retried or not"),
        ],
    ),
    (
        "Common options",
        &[
            ("-d, --debug", "debugging output"),
            (
                "-h, --host=HOSTNAME",
                "the server's host or socket directory",
            ),
            ("-p, --port=PORT", "the server's port"),
            ("-U, --username=USERNAME", "the user to connect as"),
            ("-V, --version", "print the version and exit"),
            ("-?, --help", "print this list and exit"),
        ],
    ),
];

/// The text `--help` prints.
pub fn text() -> String {
    let mut s = format!(
        "pgbench is a benchmarking tool for PostgreSQL (this one is dbsweep {}'s drop-in: \
         pgbench's benchmarks, options and figures).\n\n\
         Usage:\n  pgbench [OPTION]... [DBNAME]\n",
        env!("CARGO_PKG_VERSION")
    );
    for (title, options) in GROUPS {
        s.push_str(&format!("\n{title}:\n"));
        for (opt, what) in *options {
            // As pgbench's: the description at column 27, or on its own line under a long
            // option.
            if opt.len() <= 24 {
                s.push_str(&format!("  {opt:<24} {what}\n"));
            } else {
                s.push_str(&format!("  {opt}\n{:27}{what}\n", ""));
            }
        }
    }
    s.push_str(
        "\nAlso PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE, as libpq reads them; \
         each run's full figures go to a dbsweep results file in the directory \
         DBSWEEP_RESULTS_DIR names, if set (see dbsweep's README, \"Drop-in for pgbench\"). dbsweep's own --metrics-listen=[HOST:]PORT serves live \
         metrics (OpenMetrics, at /metrics) while a run goes on.\n\n\
         Report bugs to dbsweep's issue tracker (not PostgreSQL's: this pgbench is dbsweep).\n",
    );
    s
}

#[cfg(test)]
mod tests {
    /// Every option listed is one the drop-in takes, by both its names.
    #[test]
    fn the_list_holds_only_options_the_drop_in_takes() {
        for (_, options) in super::GROUPS {
            for (opt, _) in *options {
                for name in opt.split(", ") {
                    let name = name.split(['=', '[']).next().unwrap();
                    let known = match name.strip_prefix("--") {
                        Some(long) => super::super::getopt::OPTIONS.iter().any(|o| o.1 == long),
                        None => {
                            let c = name.chars().nth(1).unwrap();
                            super::super::getopt::OPTIONS.iter().any(|o| o.0 == Some(c))
                        }
                    };
                    assert!(known, "{name}");
                }
            }
        }
    }
}
