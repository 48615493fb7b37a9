//! Workload steps on client hosts (`client_hosts` in a plan): ssh runs the dbsweep binary on
//! each host with its share of the clients and one `--start-at` instant; each host's results
//! file and log are kept beside the step's record (`hosts/NN-STEP.HOST.json`, `.log`) and
//! the parts are merged (`dbsweep merge`) into the record.
//! ssh is the engine (its keys, its config, its agent); `DBSWEEP_SSH` names another program
//! that takes ssh's arguments. The target URL (and its password) goes to each host's run on
//! its standard input, never in a command line (`ps` on either host would show it); the run
//! keeps reading it, and its closing (the ssh session ended: this sweep stopped, or was
//! killed) stops the run there as Ctrl-C would.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::plan::sweep_plan::Host;
use crate::results::{Results, ResultsFile};

/// How long ssh may take to start every host's run before the measured part: the start
/// instant is this far ahead of now (plus the warm-up).
const START_LEAD_S: f64 = 5.0;
/// Beyond its run's own seconds, how long a host may take to finish and answer.
const FINISH_GRACE: Duration = Duration::from_secs(120);

impl Host {
    /// ssh to this host, ready for the remote command.
    fn ssh(&self) -> Command {
        let program = std::env::var("DBSWEEP_SSH").unwrap_or_else(|_| "ssh".into());
        let mut c = Command::new(program);
        // No prompts; a connection that goes silent ends within 30 s (its keep-alives), so
        // that fetching a host's results cannot wait for ever.
        c.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=3",
        ]);
        if let Some(p) = self.port {
            c.arg("-p").arg(p.to_string());
        }
        c.arg(&self.dest).arg("--");
        c.stdin(Stdio::null());
        c
    }
}

/// `arg` quoted for the remote POSIX shell that ssh hands the command to.
pub fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// What one workload step runs on the hosts.
pub struct Remote<'a> {
    pub hosts: &'a [Host],
    /// The dbsweep binary on the hosts.
    pub program: &'a str,
    /// `run WORKLOAD --threads N ...`: each host's share of the clients.
    pub argv: Vec<String>,
    pub url: &'a str,
    pub warmup: f64,
    pub time: f64,
    /// The step's record path: the hosts' logs and results files go beside it, in `hosts/`.
    pub record: &'a Path,
}

/// Runs the step on every host at one instant and returns the merged results. Ctrl-C
/// (`stop`) ends the wait: the ssh sessions are killed.
pub fn run(r: &Remote, stop: &AtomicBool, say: &dyn Fn(&str)) -> Result<Results, Error> {
    let start_at = crate::runner::epoch_now().ceil() + START_LEAD_S + r.warmup;
    let stem = r
        .record
        .file_stem()
        .map_or("step".into(), |s| s.to_string_lossy().into_owned());
    // Beside the step's record, in a directory of their own (reports read the records only).
    let dir = r.record.parent().unwrap_or(Path::new(".")).join("hosts");
    fs::create_dir_all(&dir)
        .map_err(|e| Error::Run(format!("{}: cannot create it: {e}", dir.display())))?;
    let remote_file =
        |h: &Host| format!("/tmp/dbsweep-{stem}-{}-{}.json", std::process::id(), h.id);
    let mut children: Vec<(usize, Child, PathBuf)> = Vec::new();
    for (i, h) in r.hosts.iter().enumerate() {
        let mut cmd: Vec<String> = vec![quote(r.program)];
        cmd.extend(r.argv.iter().map(|a| quote(a)));
        cmd.push("--target-stdin".into());
        for (k, v) in [
            ("--start-at", format!("{start_at}")),
            ("--client-id", h.id.clone()),
            ("--output", remote_file(h)),
            ("--report-interval", "0".into()),
        ] {
            cmd.push(k.into());
            cmd.push(quote(&v));
        }
        let log = dir.join(format!("{stem}.{}.log", h.id));
        let file = fs::File::create(&log).map_err(|e| {
            Error::Run(format!(
                "{}: cannot write the host's log: {e}",
                log.display()
            ))
        })?;
        let err = file
            .try_clone()
            .map_err(|e| Error::Run(format!("{}: {e}", log.display())))?;
        let mut child = h
            .ssh()
            .arg(cmd.join(" "))
            .stdin(Stdio::piped())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| Error::Run(format!("client host {}: cannot start ssh: {e}", h.dest)))?;
        // The URL line; the pipe stays open while the run lasts (its end stops the run).
        if let Some(stdin) = child.stdin.as_mut() {
            use std::io::Write as _;
            let sent = stdin.write_all(format!("{}\n", r.url).as_bytes());
            if let Err(e) = sent {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::Run(format!(
                    "client host {}: ssh did not take the target: {e}",
                    h.dest
                )));
            }
        }
        children.push((i, child, log));
    }
    say(&format!(
        "running on {} client hosts from {} (UTC)",
        r.hosts.len(),
        crate::results::utc_datetime(start_at as u64)
    ));
    let deadline =
        Instant::now() + Duration::from_secs_f64(START_LEAD_S + r.warmup + r.time) + FINISH_GRACE;
    let waited = wait_all(&mut children, deadline, stop);
    if let Err(e) = waited {
        for (_, c, _) in &mut children {
            // The end of its standard input stops the host's run, wherever ssh leaves it.
            drop(c.stdin.take());
            let _ = c.kill();
            let _ = c.wait();
        }
        return Err(e);
    }
    let mut parts = Vec::new();
    for (i, mut child, log) in children {
        let h = &r.hosts[i];
        let status = child.wait().map_err(|e| Error::Run(e.to_string()))?;
        if !status.success() {
            let text = fs::read_to_string(&log).unwrap_or_default();
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            return Err(Error::Run(format!(
                "client host {}: the run failed ({status}): {last} (log: {})",
                h.dest,
                log.display()
            )));
        }
        let local = dir.join(format!("{stem}.{}.json", h.id));
        fetch(h, &remote_file(h), &local, stop)?;
        parts.push((local.display().to_string(), Results::read(&local)?));
    }
    let (merged, warnings) = crate::results::merge::merge(&parts).map_err(Error::Run)?;
    for w in warnings {
        say(&format!("warning: merging the client hosts' results: {w}"));
    }
    Ok(merged)
}

/// Waits for every ssh session, within `deadline`; Ctrl-C ends the wait.
fn wait_all(
    children: &mut [(usize, Child, PathBuf)],
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<(), Error> {
    loop {
        let mut running = 0;
        for (_, c, _) in children.iter_mut() {
            if c.try_wait()
                .map_err(|e| Error::Run(e.to_string()))?
                .is_none()
            {
                running += 1;
            }
        }
        if running == 0 {
            return Ok(());
        }
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Run(
                "interrupted: the client hosts' runs were abandoned".into(),
            ));
        }
        if Instant::now() > deadline {
            return Err(Error::Run(format!(
                "{running} client host(s) did not finish within the step's time and {} s more",
                FINISH_GRACE.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Copies the host's results file to `local` (atomically) and removes it there; the wait has
/// the same bounds as the run's (a deadline, Ctrl-C).
fn fetch(h: &Host, remote: &str, local: &Path, stop: &AtomicBool) -> Result<(), Error> {
    let part = local.with_extension("json.part");
    let file = fs::File::create(&part)
        .map_err(|e| Error::Run(format!("{}: cannot write it: {e}", part.display())))?;
    let child = h
        .ssh()
        .arg(format!("cat {} && rm -f {}", quote(remote), quote(remote)))
        .stdout(file)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Run(format!("client host {}: ssh: {e}", h.dest)))?;
    let mut children = [(0, child, part.clone())];
    let waited = wait_all(&mut children, Instant::now() + FINISH_GRACE, stop);
    let [(_, mut child, _)] = children;
    if let Err(e) = waited {
        let _ = child.kill();
        let _ = child.wait();
        let _ = fs::remove_file(&part);
        return Err(e);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Run(format!("client host {}: ssh: {e}", h.dest)))?;
    let bytes = fs::read(&part).map_err(|e| Error::Run(format!("{}: {e}", part.display())));
    let _ = fs::remove_file(&part);
    if !out.status.success() {
        return Err(Error::Run(format!(
            "client host {}: cannot read back {remote}: {}",
            h.dest,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    ResultsFile::create(local)?.commit_bytes(&bytes?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_as_ssh_urls() {
        assert_eq!(
            Host::parse("ssh://bench@h1.example:2222"),
            Ok(Host {
                dest: "bench@h1.example".into(),
                port: Some(2222),
                id: "h1.example".into()
            })
        );
        assert_eq!(Host::parse("ssh://h2").unwrap().dest, "h2");
        for bad in [
            "h1",
            "ssh://",
            "ssh://a@",
            "ssh://h:x",
            "ssh://h;rm -rf /",
            "ssh://a b@h",
        ] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remote_arguments_are_quoted_for_the_shell() {
        assert_eq!(quote("--threads=4"), "--threads=4");
        assert_eq!(quote("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(x)"), "'$(x)'");
        assert_eq!(quote(""), "''");
    }
}
