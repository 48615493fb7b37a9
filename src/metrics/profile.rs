//! The on-CPU profile of the server's processes over the measured part of a run: `perf record
//! -g` at a modest frequency, folded into stacks (inferno's perf collapser), the functions with
//! the most samples (self and total), and a flame graph (inferno's SVG).
//!
//! perf is a program the user installs (Debian's `linux-perf`), not a library: it runs as a
//! child in its own process group (Ctrl-C reaches the run, which stops perf itself), every wait
//! on it has a bound, and any failure leaves the step unprofiled with one warning.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::results::diagnosis::{FunctionShare, Profile};
use inferno::collapse::Collapse;

/// Samples per second per CPU: modest, and off the beat of timers that tick at round rates.
pub const DEFAULT_HZ: u32 = 99;
/// Functions kept in the results: the most by self and the most by total share.
const KEEP: usize = 25;
/// How often the server's processes are listed while perf records.
const PID_POLL: Duration = Duration::from_millis(500);
/// How long perf may take to write its data after it is told to stop.
const STOP_BOUND: Duration = Duration::from_secs(15);
/// How long `perf script` and the folding may take.
const SCRIPT_BOUND: Duration = Duration::from_secs(120);

impl Profile {
    /// Builds the figures of folded stacks.
    pub fn of_folded(folded: String, subject: &str, hz: u32, processes: u32) -> Profile {
        let mut samples = 0u64;
        let mut unknown = 0u64;
        let mut own: HashMap<&str, u64> = HashMap::new();
        let mut total: HashMap<&str, u64> = HashMap::new();
        for line in folded.lines() {
            let Some((stack, n)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(n) = n.trim().parse::<u64>() else {
                continue;
            };
            // The first frame is the process's name, not a function.
            let frames: Vec<&str> = stack.split(';').skip(1).collect();
            samples += n;
            let Some(leaf) = frames.last() else {
                continue;
            };
            // inferno names a frame without a symbol by its binary: `[postgres]`, `[unknown]`.
            if leaf.starts_with('[') && leaf.ends_with(']') {
                unknown += n;
            }
            *own.entry(leaf).or_default() += n;
            let mut seen: Vec<&str> = Vec::with_capacity(frames.len());
            for f in &frames {
                if !seen.contains(f) {
                    seen.push(f);
                    *total.entry(f).or_default() += n;
                }
            }
        }
        let share = |n: u64| {
            if samples > 0 {
                n as f64 / samples as f64
            } else {
                0.0
            }
        };
        let mut names = ranked(&own);
        for f in ranked(&total) {
            if !names.contains(&f) {
                names.push(f);
            }
        }
        let mut functions: Vec<FunctionShare> = names
            .into_iter()
            .map(|f| FunctionShare {
                function: f.to_string(),
                self_share: share(own.get(f).copied().unwrap_or(0)),
                total_share: share(total.get(f).copied().unwrap_or(0)),
            })
            .collect();
        functions.sort_by(|a, b| {
            b.self_share
                .total_cmp(&a.self_share)
                .then(b.total_share.total_cmp(&a.total_share))
                .then(a.function.cmp(&b.function))
        });
        Profile {
            subject: subject.to_string(),
            hz,
            samples,
            processes,
            unknown_share: share(unknown),
            functions,
            stacks_file: None,
            flame_file: None,
            folded,
        }
    }

    /// Writes the folded stacks (gzip) and the flame graph beside `results` (a results file or
    /// step record: `NAME.json` gets `NAME.stacks.gz` and `NAME.flame.svg`), and notes their
    /// names. Each file is written whole or not at all.
    pub fn save_beside(&mut self, results: &Path, title: &str) -> Result<(), String> {
        let stem = results
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| format!("{}: no file name", results.display()))?;
        let dir = results.parent().unwrap_or(Path::new("."));
        let stacks = format!("{stem}.stacks.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(self.folded.as_bytes())
            .and_then(|()| gz.finish())
            .and_then(|bytes| write_whole(&dir.join(&stacks), &bytes))
            .map_err(|e| format!("writing {}: {e}", dir.join(&stacks).display()))?;
        self.stacks_file = Some(stacks);
        let svg = flame_svg(&self.folded, title)?;
        let flame = format!("{stem}.flame.svg");
        write_whole(&dir.join(&flame), svg.as_bytes())
            .map_err(|e| format!("writing {}: {e}", dir.join(&flame).display()))?;
        self.flame_file = Some(flame);
        Ok(())
    }
}

/// The `KEEP` functions with the most samples in `m`.
fn ranked<'a>(m: &HashMap<&'a str, u64>) -> Vec<&'a str> {
    let mut v: Vec<(&str, u64)> = m.iter().map(|(f, n)| (*f, *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().take(KEEP).map(|(f, _)| f).collect()
}

/// The most bytes of folded stacks a saved profile may inflate to: a step's stacks are a few
/// MiB at most, and a file that says more is not one dbsweep wrote (a 5.8 MB gzip bomb would
/// take gigabytes).
pub const STACKS_INFLATED_MAX: u64 = 64 << 20;

/// The most bytes a saved flame graph may have.
pub const FLAME_MAX: u64 = 64 << 20;

/// Reads folded stacks saved by [`Profile::save_beside`]: a regular file (no link followed) of
/// at most [`STACKS_INFLATED_MAX`] bytes, compressed and inflated.
pub fn read_stacks(path: &Path) -> Result<String, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let gz = crate::input::read_own(path, STACKS_INFLATED_MAX).map_err(|e| at(&e))?;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .take(STACKS_INFLATED_MAX + 1)
        .read_to_end(&mut text)
        .map_err(|e| at(&e))?;
    if text.len() as u64 > STACKS_INFLATED_MAX {
        return Err(at(&format_args!(
            "inflates past {} MiB: not the folded stacks of a step",
            STACKS_INFLATED_MAX >> 20
        )));
    }
    String::from_utf8(text).map_err(|_| at(&"not UTF-8 text"))
}

/// Reads a flame graph saved by [`Profile::save_beside`]: a regular file (no link followed) of
/// at most [`FLAME_MAX`] bytes that is an SVG document.
pub fn read_flame(path: &Path) -> Result<String, String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let bytes = crate::input::read_own(path, FLAME_MAX).map_err(|e| at(&e))?;
    let text = String::from_utf8(bytes).map_err(|_| at(&"not UTF-8 text"))?;
    let head = text.trim_start();
    if !(head.starts_with("<?xml") || head.starts_with("<svg")) || !text.contains("<svg") {
        return Err(at(&"not an SVG flame graph"));
    }
    Ok(text)
}

/// A flame graph of folded stacks, as SVG.
pub fn flame_svg(folded: &str, title: &str) -> Result<String, String> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".into();
    opts.hash = true;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut out)
        .map_err(|e| format!("drawing the flame graph: {e}"))?;
    String::from_utf8(out).map_err(|e| format!("drawing the flame graph: {e}"))
}

/// A differential flame graph: `after`'s stacks coloured by how their share changed from
/// `before`'s (red grew, blue shrank), `before` scaled to `after`'s sample count.
pub fn diff_svg(before: &str, after: &str, title: &str) -> Result<String, String> {
    let mut diff = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(opts, before.as_bytes(), after.as_bytes(), &mut diff)
        .map_err(|e| format!("comparing the stacks: {e}"))?;
    let diff = String::from_utf8(diff).map_err(|e| format!("comparing the stacks: {e}"))?;
    flame_svg(&diff, title)
}

fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The perf program: `DBSWEEP_PERF` or `perf` on the PATH.
fn perf_program() -> PathBuf {
    std::env::var_os("DBSWEEP_PERF").map_or_else(|| PathBuf::from("perf"), PathBuf::from)
}

/// Whether perf can run here; the reason when it cannot.
pub fn check_perf() -> Result<(), String> {
    let perf = perf_program();
    // Bounded: a broken perf wrapper must not hang the run.
    let out = crate::server::setup::output_within(
        Command::new(&perf).arg("--version"),
        Duration::from_secs(10),
    )
    .map_err(|e| {
        format!(
            "cannot run {}: {e} (install perf: Debian's linux-perf; or set DBSWEEP_PERF)",
            perf.display()
        )
    })?;
    if !out.status.success() {
        return Err(format!(
            "{} --version failed: {}",
            perf.display(),
            last_line(&out.stderr)
        ));
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    if let (false, Some(p)) = (root, paranoid)
        && p > 0
    {
        return Err(format!(
            "kernel.perf_event_paranoid is {p}: a profile of every CPU (of which the server's samples are kept) needs root, or sysctl kernel.perf_event_paranoid=0"
        ));
    }
    Ok(())
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim()
        .to_string()
}

/// A profile being recorded by a thread of its own: it waits for the measured part, runs perf
/// until [`Profiler::finish`], then folds perf's samples.
pub struct Profiler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Result<Profile, String>>,
}

impl Profiler {
    /// Starts profiling `pids()` (listed when the measured part begins, at `from`) at
    /// `hz`; `subject` says what they are.
    pub fn start(
        pids: Box<dyn Fn() -> Vec<u32> + Send>,
        from: super::MeasureStart,
        hz: u32,
        subject: String,
    ) -> Result<Profiler, String> {
        check_perf()?;
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("profiler".into())
            .spawn(move || record(&*pids, &from, hz, &subject, &stopped))
            .map_err(|e| format!("cannot start the profiler's thread: {e}"))?;
        Ok(Profiler { stop, thread })
    }

    /// Stops perf and returns the profile of the measured part.
    pub fn finish(self) -> Result<Profile, String> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err("the profiler's thread panicked".into()))
    }
}

fn record(
    pids: &dyn Fn() -> Vec<u32>,
    from: &super::MeasureStart,
    hz: u32,
    subject: &str,
    stopped: &mpsc::Receiver<()>,
) -> Result<Profile, String> {
    if !from.wait(stopped) {
        return Err("the run ended before its measured part".into());
    }
    let dir = tempfile::tempdir().map_err(|e| format!("a directory for perf's data: {e}"))?;
    let data = dir.path().join("perf.data");
    let errors = dir.path().join("perf.err");
    let err_file =
        std::fs::File::create(&errors).map_err(|e| format!("{}: {e}", errors.display()))?;
    let perf = perf_program();
    let mut child = Command::new(&perf)
        // Every CPU, and the server's samples picked out afterwards: perf -p follows neither
        // the backends a server forks after it attached (a client's reconnect) nor new threads.
        .args(["record", "-a", "-g", "-q", "-F", &hz.to_string(), "-o"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file)
        // Its own process group: the terminal's Ctrl-C goes to the run, which stops perf.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", perf.display()))?;
    // Until the run ends (the sender is dropped or sends), the server's processes as they come
    // and go: a backend ends with its client, before the run's end.
    let mut seen: Vec<u32> = pids();
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(PID_POLL) {
        for p in pids() {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
    }
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = wait_bounded(&mut child, STOP_BOUND);
    let perf_says = || last_line(&std::fs::read(&errors).unwrap_or_default());
    match status {
        None => return Err(format!("perf record did not stop within {STOP_BOUND:?}")),
        // perf exits with the signal's status after a clean stop on SIGINT.
        Some(s) if !s.success() && s.code() != Some(130) && !data.exists() => {
            return Err(format!("perf record failed ({s}): {}", perf_says()));
        }
        _ => {}
    }
    if !data.exists() {
        return Err(format!("perf record wrote no data: {}", perf_says()));
    }
    let pids = seen;
    if pids.is_empty() {
        return Err("no server process to profile".into());
    }
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    let folded = fold(&perf, &data, &list.join(","))?;
    let profile = Profile::of_folded(folded, subject, hz, pids.len() as u32);
    if profile.samples == 0 {
        return Err(format!(
            "perf recorded no samples of the server's processes: {}",
            perf_says()
        ));
    }
    Ok(profile)
}

/// Waits for `child` for up to `bound` (short: perf writes its data within a second of being
/// told to stop, Ctrl-C or not); kills it then. None when it had to be killed.
fn wait_bounded(child: &mut Child, bound: Duration) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + bound;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// `perf script` of `data`, the samples of processes `pids` (a comma list), folded; killed
/// after [`SCRIPT_BOUND`].
fn fold(perf: &Path, data: &Path, pids: &str) -> Result<String, String> {
    let mut child = Command::new(perf)
        .args(["script", "-i"])
        .arg(data)
        // No period field: each sample counts one (a sample's period is its event's, in ns for
        // cpu-clock), so that counts are samples.
        .args(["-F", "comm,pid,time,event,ip,sym,dso"])
        .arg(format!("--pid={pids}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {} script: {e}", perf.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut opts = inferno::collapse::perf::Options::default();
        opts.annotate_kernel = true;
        opts.nthreads = 1;
        let mut folded = Vec::new();
        let r = inferno::collapse::perf::Folder::from(opts)
            .collapse(BufReader::new(stdout), &mut folded)
            .map(|()| String::from_utf8_lossy(&folded).into_owned());
        let _ = tx.send(r);
    });
    // Bounded, and Ctrl-C ends it (looked at every 100 ms).
    let deadline = std::time::Instant::now() + SCRIPT_BOUND;
    let folded = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(r) => break r.map_err(|e| format!("folding perf's samples: {e}")),
            Err(mpsc::RecvTimeoutError::Timeout)
                if std::time::Instant::now() < deadline && !crate::interrupt::interrupted() => {}
            Err(mpsc::RecvTimeoutError::Timeout) if crate::interrupt::interrupted() => {
                break Err("interrupted while perf script ran".into());
            }
            Err(_) => break Err(format!("perf script took more than {SCRIPT_BOUND:?}")),
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    folded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_total_shares_count_each_stack_once() {
        let folded = "postgres;main;PostgresMain;ExecutorRun;hash_search 6\n\
                      postgres;main;PostgresMain;recv_[k] 3\n\
                      postgres;main;PostgresMain;f;f 1\n"
            .to_string();
        let p = Profile::of_folded(folded, "s", 99, 2);
        assert_eq!(p.samples, 10);
        let get = |f: &str| p.functions.iter().find(|x| x.function == f).unwrap();
        assert_eq!(get("hash_search").self_share, 0.6);
        assert_eq!(get("PostgresMain").total_share, 1.0);
        assert_eq!(get("PostgresMain").self_share, 0.0);
        // A recursive function counts once per stack in its total.
        assert_eq!(get("f").total_share, 0.1);
        assert_eq!(p.functions[0].function, "hash_search");
        assert_eq!(p.unknown_share, 0.0);
    }

    #[test]
    fn a_flame_graph_has_a_frame_per_function() {
        let svg = flame_svg("p;main;work 5\np;main;idle 5\n", "t").unwrap();
        assert!(svg.contains("work") && svg.contains("idle") && svg.starts_with("<?xml"));
        let diff = diff_svg("p;main;work 5\n", "p;main;work 9\np;main;idle 1\n", "d").unwrap();
        assert!(diff.contains("idle"));
    }
}
