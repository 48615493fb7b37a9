//! The round-trip floor: the least client CPU a query can cost on this machine when the client
//! waits for each answer, as both sysbench and dbsweep do.
//!
//! A client that does nothing else sends 60 bytes (about a prepared point select) to an echo
//! server in another process and blocks until 200 bytes come back (about its result), over the
//! transport the benchmark's clients use. The kernel's send, receive and sleep/wake-up are all
//! that is left of a query, so the client's CPU per round trip is the floor under any client's
//! CPU per query. It depends on where the scheduler puts the two processes, so it is measured
//! three ways (left to the scheduler, both pinned to one CPU, pinned to two) and the least is
//! the floor.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the echo server's environment: `tcp` or the socket's path; and the CPU to pin to.
const ECHO: &str = "DBSWEEP_BENCH_ECHO";
const ECHO_CPU: &str = "DBSWEEP_BENCH_ECHO_CPU";
const REQUEST: usize = 60;
const REPLY: usize = 200;

/// When this process was started as the echo server, serves until killed and never returns.
/// `main` calls it first.
pub fn serve_if_asked() {
    let Ok(spec) = std::env::var(ECHO) else {
        return;
    };
    if let Some(cpu) = std::env::var(ECHO_CPU).ok().and_then(|c| c.parse().ok()) {
        pin(cpu);
    }
    if spec == "tcp" {
        let l = TcpListener::bind("127.0.0.1:0").expect("echo: bind");
        println!("{}", l.local_addr().expect("echo: address").port());
        serve(l.incoming().map(|s| {
            let s = s.expect("echo: accept");
            s.set_nodelay(true).expect("echo: nodelay");
            s
        }));
    } else {
        let l = UnixListener::bind(&spec).expect("echo: bind");
        println!("{spec}");
        serve(l.incoming().map(|s| s.expect("echo: accept")));
    }
    std::process::exit(0);
}

fn serve<S: Read + Write>(clients: impl Iterator<Item = S>) {
    for mut s in clients {
        let mut req = [0u8; REQUEST];
        let reply = [b'r'; REPLY];
        while s.read_exact(&mut req).is_ok() && s.write_all(&reply).is_ok() {}
    }
}

/// Pins the calling thread to one CPU.
fn pin(cpu: usize) {
    // SAFETY: the set is ours and zeroed before use; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// User + system CPU seconds of the calling thread.
fn thread_cpu() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Client CPU microseconds per round trip for each placement (free, one CPU, two CPUs) and the
/// least of them, over the Unix socket (`unix`) or loopback TCP, each for `seconds`.
pub fn measure(unix: bool, seconds: f64) -> ([Option<f64>; 3], f64) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let placements = [(None, None), (Some(0), Some(0)), (Some(0), Some(1))];
    let mut out = [None; 3];
    for (i, &(server_cpu, client_cpu)) in placements.iter().enumerate() {
        if client_cpu.is_some_and(|c| c >= cpus) {
            continue;
        }
        out[i] = Some(one(unix, server_cpu, client_cpu, seconds));
    }
    let floor = out.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    (out, floor)
}

fn one(unix: bool, server_cpu: Option<usize>, client_cpu: Option<usize>, seconds: f64) -> f64 {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("echo.sock");
    let spec = if unix {
        path.display().to_string()
    } else {
        "tcp".to_string()
    };
    let mut cmd = Command::new(std::env::current_exe().expect("own path"));
    cmd.env(ECHO, &spec).stdout(Stdio::piped());
    if let Some(c) = server_cpu {
        cmd.env(ECHO_CPU, c.to_string());
    }
    let mut child = Killed(cmd.spawn().expect("echo server starts"));
    let mut ready = String::new();
    BufReader::new(child.0.stdout.take().expect("piped"))
        .read_line(&mut ready)
        .expect("echo server's address");
    let ready = ready.trim().to_string();
    // The client runs in a thread of its own so that pinning it leaves this one (and the
    // clients it spawns later) free.
    std::thread::spawn(move || {
        if let Some(c) = client_cpu {
            pin(c);
        }
        if unix {
            round_trips(UnixStream::connect(&ready).expect("connect"), seconds)
        } else {
            let s = TcpStream::connect(("127.0.0.1", ready.parse::<u16>().expect("port")))
                .expect("connect");
            s.set_nodelay(true).expect("nodelay");
            round_trips(s, seconds)
        }
    })
    .join()
    .expect("client thread")
}

/// Client CPU microseconds per round trip, after a short warm-up.
fn round_trips<S: Read + Write>(mut s: S, seconds: f64) -> f64 {
    let req = [b'q'; REQUEST];
    let mut reply = [0u8; REPLY];
    let mut trip = |s: &mut S| {
        s.write_all(&req).expect("send");
        s.read_exact(&mut reply).expect("receive");
    };
    for _ in 0..1000 {
        trip(&mut s);
    }
    let (start, cpu) = (Instant::now(), thread_cpu());
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        for _ in 0..100 {
            trip(&mut s);
        }
        n += 100;
    }
    (thread_cpu() - cpu) * 1e6 / n as f64
}

/// A child process that is killed and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
