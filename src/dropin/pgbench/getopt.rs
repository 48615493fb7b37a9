//! pgbench's command line read as getopt_long reads it: short options bundled, their values
//! attached or apart, long options with `=` or a following word, and the database name.

use crate::error::Error;

/// getopt's complaint, then pgbench's hint.
fn usage(why: String) -> Error {
    super::usage(format!(
        "pgbench: {why}\npgbench: hint: Try \"pgbench --help\" for more information."
    ))
}

/// pgbench's options: (short, long, takes a value).
pub(super) const OPTIONS: &[(Option<char>, &str, bool)] = &[
    (Some('i'), "initialize", false),
    (Some('I'), "init-steps", true),
    (Some('s'), "scale", true),
    (Some('F'), "fillfactor", true),
    (Some('q'), "quiet", false),
    (None, "foreign-keys", false),
    (None, "unlogged-tables", false),
    (None, "no-vacuum", false),
    (Some('n'), "no-vacuum", false),
    (Some('c'), "client", true),
    (Some('j'), "jobs", true),
    (Some('T'), "time", true),
    (Some('t'), "transactions", true),
    (Some('b'), "builtin", true),
    (Some('f'), "file", true),
    (Some('D'), "define", true),
    (Some('M'), "protocol", true),
    (Some('P'), "progress", true),
    (Some('R'), "rate", true),
    (Some('S'), "select-only", false),
    (Some('N'), "skip-some-updates", false),
    (None, "random-seed", true),
    (Some('h'), "host", true),
    (Some('p'), "port", true),
    (Some('U'), "username", true),
    (Some('v'), "vacuum-all", false),
    (Some('d'), "debug", false),
    (Some('V'), "version", false),
    (Some('?'), "help", false),
    (Some('r'), "report-per-command", false),
    (Some('l'), "log", false),
    (Some('L'), "latency-limit", true),
    (Some('C'), "connect", false),
    (None, "aggregate-interval", true),
    (None, "sampling-rate", true),
    (None, "log-prefix", true),
    (None, "max-tries", true),
    (None, "failures-detailed", false),
    (None, "verbose-errors", false),
    (None, "partitions", true),
    (None, "partition-method", true),
    (None, "progress-timestamp", false),
    (None, "show-script", true),
    (None, "tablespace", true),
    (None, "index-tablespace", true),
    // dbsweep's own: pgbench has no such option.
    (None, "metrics-listen", true),
];

/// The options given (by their long names, with their values), in order.
pub(super) type Given = Vec<(&'static str, String)>;

/// The options given, and the database name if any.
pub(super) fn getopt(args: &[String]) -> Result<(Given, Option<String>), Error> {
    let mut out = Vec::new();
    let mut db = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(_, long_name, takes)) = OPTIONS.iter().find(|(_, l, _)| *l == name) else {
                return Err(usage(format!("unrecognized option '--{name}'")));
            };
            let value = match (takes, inline) {
                (true, Some(v)) => v,
                (true, None) => {
                    i += 1;
                    args.get(i - 1)
                        .cloned()
                        .ok_or_else(|| usage(format!("option '--{name}' requires an argument")))?
                }
                (false, Some(_)) => {
                    return Err(usage(format!(
                        "option '--{name}' doesn't allow an argument"
                    )));
                }
                (false, None) => String::new(),
            };
            out.push((long_name, value));
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                let Some(&(_, long_name, takes)) = OPTIONS.iter().find(|(s, ..)| *s == Some(c))
                else {
                    return Err(usage(format!("invalid option -- '{c}'")));
                };
                if takes {
                    let rest: String = chars[k..].iter().collect();
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1)
                            .cloned()
                            .ok_or_else(|| usage(format!("option requires an argument -- '{c}'")))?
                    } else {
                        rest
                    };
                    out.push((long_name, value));
                    break;
                }
                out.push((long_name, String::new()));
            }
        } else if db.is_none() {
            db = Some(a.clone());
        } else {
            return Err(super::usage(format!(
                "too many command-line arguments (first is \"{a}\")\npgbench: hint: Try \"pgbench --help\" for more information."
            )));
        }
    }
    Ok((out, db))
}
