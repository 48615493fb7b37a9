//! What a pgbench client says while the run goes on (a retried error under `--verbose-errors`,
//! a client that aborted alone), in pgbench 15's words on stderr.

use std::fmt::Write as _;

use crate::output::note::{self, Aborted, ClientNote};

/// A client's note as pgbench says it, in one write so that clients' lines do not interleave
/// (a workload's warning as dbsweep says it).
pub(super) fn say(n: &ClientNote) {
    let text = client_note_text(n);
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), text.as_bytes());
}

/// What a client says while the run goes on, as pgbench 15 says it on stderr.
fn client_note_text(note: &ClientNote) -> String {
    match *note {
        ClientNote::Retryable {
            client,
            at,
            message,
            tries,
            max_tries,
            last,
        } => {
            let mut out = String::new();
            if let Some(at) = at {
                let _ = writeln!(
                    out,
                    "pgbench: client {client} got an error in command {} (SQL) of script {}; ERROR:  {message}",
                    at.command, at.script
                );
            }
            let max = max_tries.map_or(String::new(), |m| format!("/{m}"));
            let what = if last {
                "ends the failed transaction"
            } else {
                "repeats the transaction after the error"
            };
            let _ = writeln!(out, "pgbench: client {client} {what} (try {tries}{max})");
            out
        }
        ClientNote::Aborted {
            client,
            at,
            code,
            message,
            whole,
            how,
        } => {
            // PostgreSQL's class 57P (the session ended by the server) comes as FATAL.
            let severity = if code.starts_with("57P") {
                "FATAL"
            } else {
                "ERROR"
            };
            let (command, script) = at.map_or((0, 0), |a| (a.command, a.script));
            // A meta-command's failure: its error, then pgbench's commandFailed line (which
            // counts commands from 0).
            if let Some((word, what)) = code
                .strip_prefix(note::META_FAILED)
                .and_then(|r| r.split_once(": "))
            {
                let said = if message.is_empty() {
                    String::new()
                } else {
                    format!("pgbench: error: {message}\n")
                };
                return format!(
                    "{said}pgbench: error: client {client} aborted in command {command} ({word}) of script {script}; {what}\n"
                );
            }
            if code == note::STORE_FAILED {
                return format!(
                    "pgbench: error: gset: invalid variable name: \"{message}\"\npgbench: error: client {client} script {script} command {command} query 0: error storing into variable {message}\n"
                );
            }
            if code == crate::db::postgres::wire::COPY_REFUSED {
                return "pgbench: error: COPY is not supported in pgbench, aborting\n".into();
            }
            if code == note::OPEN_AT_END {
                return format!(
                    "pgbench: error: client {client} aborted: end of script reached without completing the last transaction\n"
                );
            }
            match how {
                Aborted::Lost => format!(
                    "pgbench: error: client {client} aborted in command {command} (SQL) of script {script}; perhaps the backend died while processing\n"
                ),
                Aborted::Connecting => {
                    format!(
                        "pgbench: error: client {client} aborted while establishing connection\n"
                    )
                }
                Aborted::InCommand => match whole {
                    Some(whole) => format!(
                        "pgbench: error: client {client} script {script} aborted in command {command} query 0: {whole}"
                    ),
                    None => format!(
                        "pgbench: error: client {client} script {script} aborted in command {command} query 0: {severity}:  {message}\n"
                    ),
                },
            }
        }
        ClientNote::Warning { message } => format!("warning: {message}\n"),
    }
}
