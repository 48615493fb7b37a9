//! The pgbench drop-in's values judged as pgbench judges them, in its words, before anything
//! connects: integer options in their ranges, the rate, `-D`, `-I`, `--random-seed`, and the
//! open files the clients need.

use super::{last, usage};
use crate::error::Error;

/// Each option's value, in the order given, as pgbench judges it: its integer options in their
/// ranges, the rate, the variable definitions, the initialization steps; and, as pgbench
/// checks, the open files that the clients' connections need.
pub(super) fn check_values(opts: &[(&str, String)]) -> Result<(), Error> {
    const MAX: i64 = i32::MAX as i64;
    for (name, v) in opts {
        match *name {
            "client" => int_in(v, "-c/--clients", 1, MAX)?,
            "jobs" => int_in(v, "-j/--jobs", 1, MAX)?,
            "transactions" => int_in(v, "-t/--transactions", 1, MAX)?,
            "time" => int_in(v, "-T/--time", 1, MAX)?,
            "progress" => int_in(v, "-P/--progress", 1, MAX)?,
            "scale" => int_in(v, "-s/--scale", 1, MAX)?,
            "fillfactor" => int_in(v, "-F/--fillfactor", 10, 100)?,
            "partitions" => int_in(v, "--partitions", 0, MAX)?,
            "aggregate-interval" => int_in(v, "--aggregate-interval", 1, MAX)?,
            "rate"
                if !v
                    .trim()
                    .parse::<f64>()
                    .is_ok_and(|r| r.is_finite() && r > 0.0) =>
            {
                return Err(usage(format!("invalid rate limit: \"{v}\"")));
            }
            "sampling-rate" if !v.trim().parse::<f64>().is_ok_and(|r| r > 0.0 && r <= 1.0) => {
                return Err(usage(format!("invalid sampling rate: \"{v}\"")));
            }
            "define" => check_define(v)?,
            "init-steps" => check_init_steps(v)?,
            "random-seed" if v != "time" && v != "rand" => {
                seed_value(v).map_err(|e| {
                    usage(format!(
                        "{}\npgbench: error: error while setting random seed from --random-seed option",
                        e.to_string().trim_start_matches("pgbench: error: ")
                    ))
                })?;
            }
            _ => {}
        }
    }
    modes(opts)?;
    if let Some(c) = last(opts, "client").and_then(|c| c.trim().parse::<u64>().ok()) {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given.
        let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
        if got && lim.rlim_cur != libc::RLIM_INFINITY && lim.rlim_cur < c + 3 {
            return Err(usage(format!(
                "need at least {} open files, but system limit is {}\n\
                 pgbench: hint: Reduce number of clients, or use limit/ulimit to increase the system limit.",
                c + 3,
                lim.rlim_cur
            )));
        }
    }
    Ok(())
}

/// An integer option's value, as pgbench's option_parse_int judges it.
fn int_in(v: &str, option: &str, min: i64, max: i64) -> Result<(), Error> {
    match v.trim().parse::<i64>() {
        Err(_) => Err(usage(format!("invalid value \"{v}\" for option {option}"))),
        Ok(n) if n < min || n > max => {
            Err(usage(format!("{option} must be in range {min}..{max}")))
        }
        Ok(_) => Ok(()),
    }
}

/// `-D NAME=VALUE`: a name pgbench takes (a letter or underscore first, then letters, digits
/// and underscores; bytes past ASCII count as letters) and a value.
fn check_define(v: &str) -> Result<(), Error> {
    let Some((name, _)) = v
        .split_once('=')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
    else {
        return Err(usage(format!("invalid variable definition: \"{v}\"")));
    };
    let letter = |c: char| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii();
    let valid = name.chars().next().is_some_and(letter)
        && name.chars().all(|c| letter(c) || c.is_ascii_digit());
    if !valid {
        return Err(usage(format!("option: invalid variable name: \"{name}\"")));
    }
    Ok(())
}

/// `-I STEPS`: at least one of pgbench's step letters, nothing else (spaces are skipped).
fn check_init_steps(v: &str) -> Result<(), Error> {
    const STEPS: &str = "dtgGvpf";
    if let Some(bad) = v.chars().find(|c| *c != ' ' && !STEPS.contains(*c)) {
        return Err(usage(format!(
            "unrecognized initialization step \"{bad}\"\npgbench: detail: Allowed step characters are: \"{STEPS}\"."
        )));
    }
    if v.trim().is_empty() {
        return Err(usage("no initialization steps specified"));
    }
    Ok(())
}

/// `--random-seed=N` as pgbench reads it: an unsigned 64-bit integer, a negative one taken
/// modulo 2^64 (as strtoull does).
pub(super) fn seed_value(v: &str) -> Result<u64, Error> {
    let t = v.trim();
    t.parse::<u64>()
        .ok()
        .or_else(|| t.parse::<i64>().ok().map(|n| n as u64))
        .ok_or_else(|| {
            usage(format!(
                "unrecognized random seed option \"{v}\"\npgbench: detail: Expecting an unsigned integer, \"time\" or \"rand\"."
            ))
        })
}

/// The options only `-i` takes, and those only a run takes, as pgbench sorts them.
const INIT_ONLY: &[&str] = &[
    "init-steps",
    "fillfactor",
    "quiet",
    "unlogged-tables",
    "tablespace",
    "index-tablespace",
    "foreign-keys",
    "partitions",
    "partition-method",
];
const RUN_ONLY: &[&str] = &[
    "vacuum-all",
    "report-per-command",
    "transactions",
    "time",
    "client",
    "connect",
    "jobs",
    "select-only",
    "skip-some-updates",
    "builtin",
    "file",
    "define",
    "protocol",
    "progress",
    "rate",
    "latency-limit",
    "log",
    "sampling-rate",
    "aggregate-interval",
    "progress-timestamp",
    "log-prefix",
    "random-seed",
    "failures-detailed",
    "max-tries",
    "verbose-errors",
];

/// `-i` with a run's options, or a run with `-i`'s, refused as pgbench refuses them (after
/// every value was judged, before anything connects).
fn modes(opts: &[(&str, String)]) -> Result<(), Error> {
    let given = |set: &[&str]| opts.iter().any(|(k, _)| set.contains(k));
    if opts.iter().any(|(k, _)| *k == "initialize") {
        if given(RUN_ONLY) {
            return Err(usage(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
    } else if given(INIT_ONLY) {
        return Err(usage(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    } else if given(&["progress-timestamp"]) && !given(&["progress"]) {
        return Err(usage(
            "--progress-timestamp is allowed only under --progress",
        ));
    }
    Ok(())
}
