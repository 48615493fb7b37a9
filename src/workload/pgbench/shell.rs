//! pgbench's `\shell` and `\setshell`: a command line run by `/bin/sh -c`, as pgbench's
//! `system()` and `popen()` run it. The wait ends with the command, or with Ctrl-C, which kills
//! it; the end of `-T` does not cut it (pgbench finishes the transaction in flight).

use std::io::{BufRead, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::client::PgbenchClient;
use super::expr::Value;

/// How a shell command ended, when it did not give what was asked.
#[derive(Debug, PartialEq)]
pub enum ShellError {
    /// It could not be started, or (`\shell`) exited with a status other than 0.
    Failed,
    /// Ctrl-C ended it.
    Interrupted,
}

/// The most of a `\setshell` command's output kept (pgbench reads one line of it).
const KEPT: u64 = 64 * 1024;

/// Runs `line` by the shell. With `capture`, its standard output's first line is returned
/// (its exit status not looked at, as pgbench's `\setshell`); else the output is the
/// process's, and an exit status other than 0 fails (as pgbench's `\shell`).
pub fn run(line: &str, capture: bool) -> Result<Option<String>, ShellError> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("/bin/sh")
        .args(["-c", line])
        // A group of its own: Ctrl-C ends the shell and everything it started (`sleep 300`
        // of `sh -c 'sleep 300; ...'` would outlive a signal to the shell alone).
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .map_err(|_| ShellError::Failed)?;
    let pid = child.id();
    let stdout = child.stdout.take();
    // The wait happens on a thread of its own, so that this one can look for Ctrl-C and still
    // wake the moment the command ends.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout {
            // The first line only, as pgbench's fgets: reading to the end would wait for any
            // background process the command left holding its output. What comes later meets
            // a closed pipe, as after pgbench's pclose.
            let _ = std::io::BufReader::new(s.take(KEPT)).read_until(b'\n', &mut out);
        }
        let _ = tx.send((child.wait().map(|s| s.success()), out));
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((status, out)) => {
                if !capture {
                    return match status {
                        Ok(true) => Ok(None),
                        _ => Err(ShellError::Failed),
                    };
                }
                let text = String::from_utf8_lossy(&out);
                let first = text.split_inclusive('\n').next().unwrap_or("");
                return Ok(Some(first.to_string()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) if crate::interrupt::interrupted() => {
                // SAFETY: kill sends a signal to the process group this call started (its
                // id is the shell's pid); the waiting thread reaps the shell, so the id
                // cannot have been reused yet.
                unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
                return Err(ShellError::Interrupted);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(ShellError::Failed),
        }
    }
}

/// `\setshell`'s output as pgbench reads it: an integer, blanks around it allowed.
pub fn integer(out: &str) -> Option<i64> {
    out.trim().parse().ok()
}

impl PgbenchClient {
    /// `\shell` / `\setshell VAR`: the words, variables put in, run by the shell; `\setshell`
    /// keeps the integer it prints. Errors are pgbench's, named by the command's first word;
    /// None when Ctrl-C ended the command.
    pub(super) fn shell(
        &mut self,
        var: Option<&str>,
        words: &[String],
    ) -> Result<(), Option<String>> {
        let program = words.first().map_or("", String::as_str);
        let mut line = String::new();
        for w in words {
            if !line.is_empty() {
                line.push(' ');
            }
            match w.strip_prefix(':') {
                Some(lit) if lit.starts_with(':') => line.push_str(lit),
                Some(name) => match (self.vars.get(name), self.texts.get(name)) {
                    (_, Some(t)) => line.push_str(t),
                    (Some(n), None) => line.push_str(&n.text()),
                    (None, None) => {
                        return Err(Some(format!("{program}: undefined variable \"{w}\"")));
                    }
                },
                None => line.push_str(w),
            }
        }
        match (run(&line, var.is_some()), var) {
            // pgbench reads one line of the output: none at all is its own error.
            (Ok(Some(out)), Some(_)) if out.is_empty() => Err(Some(format!(
                "{program}: could not read result of shell command"
            ))),
            (Ok(Some(out)), Some(var)) => {
                let n = integer(&out).ok_or_else(|| {
                    Some(format!(
                        "{program}: shell command must return an integer (not \"{}\")",
                        out.trim_end()
                    ))
                })?;
                // As `\set`, the name is judged when the value is stored.
                if !super::meta::valid_name(var) {
                    return Err(Some(format!("setshell: invalid variable name: \"{var}\"")));
                }
                self.set(var.to_string(), Value::Int(n));
                Ok(())
            }
            (Ok(_), _) => Ok(()),
            (Err(ShellError::Interrupted), _) => Err(None),
            (Err(ShellError::Failed), Some(_)) => {
                Err(Some(format!("{program}: could not run shell command")))
            }
            (Err(ShellError::Failed), None) => {
                Err(Some(format!("{program}: could not launch shell command")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_by_the_shell_and_its_first_line_is_kept() {
        assert_eq!(
            run("printf ' 42 \\n7\\n'; exit 3", true),
            Ok(Some(" 42 \n".into()))
        );
        assert_eq!(integer(" 42 \n"), Some(42));
        assert_eq!(integer("abc"), None);
        assert_eq!(run("true", false), Ok(None));
        assert_eq!(run("exit 1", false), Err(ShellError::Failed));
    }

    #[test]
    fn setshell_does_not_wait_for_a_background_process_holding_its_output() {
        // The command prints its line and leaves a process behind with its standard output
        // (its pid in a file, to end it afterwards): the line comes when the shell exits.
        let dir = std::env::temp_dir().join(format!("dbsweep-setshell-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("pid");
        let line = format!("echo 5; sleep 600 & echo $! > '{}'", pid_file.display());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(run(&line, true)));
        // A bound on a wait that would otherwise be the background process's 600 s.
        let got = rx.recv_timeout(Duration::from_secs(60));
        if let Ok(pid) = std::fs::read_to_string(&pid_file)
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            // SAFETY: kill sends a signal to the sleep this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got, Ok(Ok(Some("5\n".into()))));
    }
}
