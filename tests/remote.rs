//! Beyond one machine: network namespaces joined by veth pairs make a database host and two
//! client hosts on this machine (root needed; CI runs as root). The database host runs a
//! managed server (reached on its own address through a forwarder, since managed servers
//! listen on loopback only) and Debian's prometheus-node-exporter; the clients run the dbsweep
//! binary with `ip netns exec`. Namespaces and processes go at the end of each test, also when
//! it fails (Drop).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use dbsweep::server::ServerKind;
use serde_json::Value;

use crate::util::{Scratch, assert_valid_results, f, read_json, u};

pub(crate) static NEXT: AtomicU32 = AtomicU32::new(0);

/// A database host and client hosts, each a network namespace.
pub(crate) struct Hosts {
    pub(crate) server_ns: String,
    /// (namespace, the database host's address as that client sees it).
    pub(crate) clients: Vec<(String, String)>,
    /// The forwarder's port on the database host (the server's own port on its loopback).
    pub(crate) port: u16,
    pub(crate) stop: Option<mpsc::Sender<()>>,
    pub(crate) thread: Option<std::thread::JoinHandle<()>>,
    pub(crate) exporter: Option<Child>,
}

pub(crate) fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("the ip command (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Moves the calling thread into network namespace `ns`.
pub(crate) fn enter(ns: &str) {
    let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("the namespace");
    // SAFETY: setns on a namespace file we hold open; it affects this thread only.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {ns}: {}", std::io::Error::last_os_error());
}

/// Copies each connection to `to` (on the namespace's loopback) both ways, until `stop`.
pub(crate) fn forward(listener: TcpListener, to: u16, stop: Arc<AtomicBool>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(client) = conn else { continue };
        let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
            continue;
        };
        let _ = (client.set_nodelay(true), server.set_nodelay(true));
        for (mut from, mut into) in [
            (client.try_clone().unwrap(), server.try_clone().unwrap()),
            (server, client),
        ] {
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from, &mut into);
                let _ = into.shutdown(std::net::Shutdown::Both);
            });
        }
    }
}

impl Hosts {
    /// A database host running a managed server of `kind` and node_exporter, and `clients`
    /// client hosts, each on its own veth pair to the database host.
    pub(crate) fn new(kind: ServerKind, clients: usize) -> Hosts {
        assert!(
            unsafe { libc::geteuid() } == 0,
            "network namespaces need root (CI runs the tests as root)"
        );
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("dbs{}x{n}", std::process::id() % 100_000);
        let server_ns = format!("{tag}s");
        let mut hosts = Hosts {
            server_ns: server_ns.clone(),
            clients: Vec::new(),
            port: 5432,
            stop: None,
            thread: None,
            exporter: None,
        };
        ip(&["netns", "add", &server_ns]);
        ip(&["-n", &server_ns, "link", "set", "lo", "up"]);
        // One /24 per test (tests run at once): the database host is .1 on a bridge, which
        // each client host's veth pair joins, as hosts on one switch.
        let net = (50 + (std::process::id() % 50) * 4 + n) % 250;
        let server_ip = format!("10.{net}.0.1");
        ip(&["-n", &server_ns, "link", "add", "br0", "type", "bridge"]);
        ip(&[
            "-n",
            &server_ns,
            "addr",
            "add",
            &format!("{server_ip}/24"),
            "dev",
            "br0",
        ]);
        ip(&["-n", &server_ns, "link", "set", "br0", "up"]);
        for c in 0..clients {
            let ns = format!("{tag}c{c}");
            ip(&["netns", "add", &ns]);
            // Registered at once, so that Drop removes it whatever fails next.
            hosts.clients.push((ns.clone(), server_ip.clone()));
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            let (veth, peer) = (format!("veth{c}"), format!("to{c}"));
            ip(&[
                "link", "add", &veth, "netns", &ns, "type", "veth", "peer", "name", &peer, "netns",
                &server_ns,
            ]);
            let client_ip = format!("10.{net}.0.{}/24", c + 2);
            ip(&["-n", &ns, "addr", "add", &client_ip, "dev", &veth]);
            ip(&["-n", &server_ns, "link", "set", &peer, "master", "br0"]);
            ip(&["-n", &ns, "link", "set", &veth, "up"]);
            ip(&["-n", &server_ns, "link", "set", &peer, "up"]);
        }
        // The managed server starts from a thread inside the database host's namespace, so
        // that it and its loopback are that host's.
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let ns = server_ns.clone();
        let port = hosts.port;
        hosts.thread = Some(std::thread::spawn(move || {
            enter(&ns);
            let server = crate::util::start(kind);
            let listener = match TcpListener::bind(("0.0.0.0", port)) {
                Ok(l) => l,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("forwarder: {e}")));
                    return;
                }
            };
            let stopping = Arc::new(AtomicBool::new(false));
            let flag = stopping.clone();
            let to = server.port;
            let fwd = std::thread::spawn(move || forward(listener, to, flag));
            let _ = ready_tx.send(Ok(()));
            let _ = stop_rx.recv();
            stopping.store(true, Ordering::Relaxed);
            // Wakes the accept loop so that it sees the flag.
            let _ = TcpStream::connect(("127.0.0.1", port));
            let _ = fwd.join();
            drop(server);
        }));
        hosts.stop = Some(stop_tx);
        match ready_rx.recv_timeout(Duration::from_secs(120)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("the database host: {e}"),
            Err(e) => panic!("the database host's server did not start: {e}"),
        }
        hosts.exporter = Some(
            Command::new("ip")
                .args(["netns", "exec", &server_ns])
                .args([
                    "prometheus-node-exporter",
                    "--web.listen-address=:9100",
                    "--collector.disable-defaults",
                    "--collector.cpu",
                    "--collector.stat",
                    "--collector.diskstats",
                    "--collector.netdev",
                    "--collector.netclass",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("prometheus-node-exporter (apt-get install prometheus-node-exporter)"),
        );
        hosts.wait_for_exporter();
        hosts
    }

    /// Polls the exporter from the first client host until it answers (bounded).
    pub(crate) fn wait_for_exporter(&self) {
        let (ns, ip) = self.clients[0].clone();
        let ok = std::thread::spawn(move || {
            enter(&ns);
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(mut s) = TcpStream::connect((ip.as_str(), 9100)) {
                    let _ = s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n");
                    let mut text = String::new();
                    let _ = s.read_to_string(&mut text);
                    if text.contains("node_cpu_seconds_total") {
                        return true;
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            false
        })
        .join()
        .unwrap();
        assert!(ok, "node_exporter did not answer within 30 s");
    }

    /// The database's URL and node_exporter's, as client `c` reaches them.
    pub(crate) fn urls(&self, kind: ServerKind, c: usize) -> (String, String) {
        let ip = &self.clients[c].1;
        let db = match kind {
            ServerKind::Postgres => format!("postgres://sbtest@{ip}:{}/sbtest", self.port),
            _ => format!("mysql://sbtest@{ip}:{}/sbtest", self.port),
        };
        (db, format!("http://{ip}:9100/metrics"))
    }

    /// dbsweep with `args` on client host `c`.
    pub(crate) fn dbsweep(&self, c: usize, args: &[&str]) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.clients[c].0])
            .arg(assert_cmd::cargo::cargo_bin("dbsweep"))
            .args(args);
        cmd
    }

    pub(crate) fn run_ok(&self, c: usize, args: &[&str]) -> String {
        let out = self.dbsweep(c, args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "dbsweep {} on client {c}: {stderr}",
            args.join(" ")
        );
        stderr
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        if let Some(mut e) = self.exporter.take() {
            let _ = e.kill();
            let _ = e.wait();
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for (ns, _) in &self.clients {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.server_ns])
            .status();
    }
}

pub(crate) fn run_results(hosts: &Hosts, c: usize, out: &Path, args: &[&str]) -> Value {
    let out_s = out.display().to_string();
    let mut all = args.to_vec();
    all.extend(["--output", &out_s]);
    hosts.run_ok(c, &all);
    let v = read_json(out);
    assert_valid_results(&v);
    v
}

#[test]
fn the_server_hosts_figures_come_from_node_exporter_and_the_network_is_a_device() {
    server_host_figures(ServerKind::Postgres);
}

#[test]
fn the_server_hosts_figures_of_a_mariadb_host() {
    server_host_figures(ServerKind::Mariadb);
}

#[test]
fn the_server_hosts_figures_of_a_mysql_host() {
    server_host_figures(ServerKind::Mysql);
}

pub(crate) fn server_host_figures(kind: ServerKind) {
    let hosts = Hosts::new(kind, 1);
    let s = Scratch::new();
    let (db, metrics) = hosts.urls(kind, 0);
    let common = ["--target", db.as_str(), "--table-size", "10000"];
    hosts.run_ok(0, &[&["prepare", "oltp_read_only"][..], &common].concat());
    let point = run_results(
        &hosts,
        0,
        &s.path("point.json"),
        &[
            &["run", "oltp_point_select", "--threads", "2", "--time", "4"][..],
            &common,
            &["--server-metrics", &metrics, "--server-net-device", "br0"],
        ]
        .concat(),
    );
    let host = &point["server_host"];
    assert_eq!(host["scope"], "host");
    assert!(host["note"].is_null(), "{host}");
    assert!(u(host, "/scrapes") >= 4, "{host}");
    // Every namespace shares the one kernel: node_exporter's host CPU per op (scraped on the
    // database host) is the local sampler's machine CPU per op, within the two windows'
    // difference.
    let remote = f(host, "/cpu_us_per_op");
    let local = f(&point, "/hw/cpu_us_per_op/machine");
    assert!(
        (remote - local).abs() <= 0.2 * local,
        "node_exporter {remote} us/op against /proc {local} us/op"
    );
    assert_eq!(u(host, "/cpus") as usize, f(&point, "/hw/cpus") as usize);
    assert!(f(host, "/cs_per_o") > 0.0, "{host}");
    // The database host's interface (the bridge its clients share), and the client's own.
    assert_eq!(host["net"]["device"], "br0", "{host}");
    // A bridge takes its ports' speed (a veth's 10 Gbit/s), node_exporter says.
    assert_eq!(host["net"]["link_mbit"], 10000.0, "{host}");
    assert!(f(host, "/net/busy_pct") > 0.0, "{host}");
    assert_eq!(point["hw"]["net"]["link_source"], "sysfs", "a veth's speed");
    assert_eq!(point["hw"]["net"]["device"], "veth0");
    let client_rx = f(&point, "/hw/net/rx_kb_per_o");
    let server_tx = f(host, "/net/tx_kb_per_o");
    assert!(client_rx > 0.05, "a point select's answer: {client_rx} KB");
    assert!(
        (client_rx - server_tx).abs() <= 0.2 * server_tx,
        "what the server sent ({server_tx} KB/op) is what the client received ({client_rx} KB/op)"
    );
    // A veth tells sysfs its speed: the link's utilisation is known on both ends.
    assert!(point["hw"]["net"]["busy_pct"].as_f64().is_some());
    // Bytes per op scale with the rows each event reads: one range of 10 rows against 100.
    let ranges = |rows: &str, name: &str| {
        run_results(
            &hosts,
            0,
            &s.path(name),
            &[
                &[
                    "run",
                    "oltp_read_only",
                    "--time",
                    "3",
                    "--skip-trx",
                    "on",
                    "--point-selects",
                    "0",
                    "--sum-ranges",
                    "0",
                    "--order-ranges",
                    "0",
                    "--distinct-ranges",
                    "0",
                    "--range-size",
                    rows,
                ][..],
                &common,
                &["--server-metrics", &metrics],
            ]
            .concat(),
        )
    };
    let r10 = ranges("10", "r10.json");
    let r100 = ranges("100", "r100.json");
    let (kb10, kb100) = (
        f(&r10, "/hw/net/rx_kb_per_o"),
        f(&r100, "/hw/net/rx_kb_per_o"),
    );
    assert!(
        kb100 > 5.0 * kb10 && kb100 < 12.0 * kb10,
        "100 rows {kb100} KB/op against 10 rows {kb10} KB/op"
    );
    let host_kb100 = f(&r100, "/server_host/net/tx_kb_per_o");
    assert!(host_kb100 > 5.0 * f(&r10, "/server_host/net/tx_kb_per_o"));
    // The report's queueing model has the network as a device.
    let (point, r100) = (s.path("point.json"), s.path("r100.json"));
    let out = local_ok(&[
        "report".as_ref(),
        "--full".as_ref(),
        point.as_os_str(),
        r100.as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("server host CPU us/op"), "{text}");
    assert!(text.contains("network KB in/op"), "{text}");
}

/// Runs the local dbsweep with `args` and checks that it succeeded; its output.
pub(crate) fn local_ok(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = crate::util::dbsweep().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "dbsweep {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reads a results file's histogram.
pub(crate) fn histogram(v: &Value) -> hdrhistogram::Histogram<u64> {
    let h: dbsweep::results::HistogramData =
        serde_json::from_value(v["histogram"].clone()).unwrap();
    h.decode().unwrap()
}

#[test]
fn two_client_hosts_started_at_one_instant_merge_exactly() {
    let kind = ServerKind::Postgres;
    let hosts = Hosts::new(kind, 2);
    let s = Scratch::new();
    let (db0, m0) = hosts.urls(kind, 0);
    let (db1, m1) = hosts.urls(kind, 1);
    hosts.run_ok(0, &["prepare", "oltp_read_only", "--target", &db0]);
    // Far enough ahead for both processes to start and connect.
    let start = dbsweep::runner::epoch_now().ceil() + 4.0;
    let start_s = format!("{start}");
    let children: Vec<(Child, std::path::PathBuf)> = [(0, &db0, &m0, "h1"), (1, &db1, &m1, "h2")]
        .into_iter()
        .map(|(c, db, metrics, id)| {
            let out = s.path(&format!("{id}.json"));
            let child = hosts
                .dbsweep(
                    c,
                    &[
                        "run",
                        "oltp_read_only",
                        "--target",
                        db,
                        "--threads",
                        "1",
                        "--time",
                        "3",
                        "--warmup",
                        "1",
                        "--start-at",
                        &start_s,
                        "--client-id",
                        id,
                        "--server-metrics",
                        metrics,
                        "--output",
                        &out.display().to_string(),
                    ],
                )
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let parts: Vec<Value> = children
        .into_iter()
        .map(|(child, out)| {
            let o = child.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            read_json(&out)
        })
        .collect();
    for p in &parts {
        // Each host scraped the database host over its own link.
        assert!(p["server_host"]["note"].is_null(), "{}", p["server_host"]);
        let from = f(p, "/measured_from");
        assert!(
            (from - start).abs() < 0.25,
            "measured from {from}, asked {start}"
        );
    }
    let merged_path = s.path("merged.json");
    let (h1, h2) = (s.path("h1.json"), s.path("h2.json"));
    local_ok(&[
        "merge".as_ref(),
        h1.as_os_str(),
        h2.as_os_str(),
        "--output".as_ref(),
        merged_path.as_os_str(),
    ]);
    let m = read_json(&merged_path);
    assert_valid_results(&m);
    assert_eq!(
        u(&m, "/events"),
        u(&parts[0], "/events") + u(&parts[1], "/events")
    );
    assert_eq!(
        u(&m, "/queries/total"),
        u(&parts[0], "/queries/total") + u(&parts[1], "/queries/total")
    );
    assert_eq!(u(&m, "/threads"), 2);
    // The p99 of the merged file is that of a histogram built from both files here.
    let mut both = histogram(&parts[0]);
    both.add(histogram(&parts[1])).unwrap();
    assert_eq!(
        f(&m, "/latency_ms/p99"),
        both.value_at_quantile(0.99) as f64 / 1e6
    );
    assert_eq!(histogram(&m).len(), both.len());
    // Intervals: the same wall-clock seconds, their events summed.
    let ivs = |v: &Value| v["intervals"].as_array().unwrap().clone();
    let (a, b, mi) = (ivs(&parts[0]), ivs(&parts[1]), ivs(&m));
    assert!(
        mi.len() >= 3 && mi.len() <= a.len().max(b.len()) + 1,
        "{mi:?}"
    );
    let second = |p: &Value, iv: &Value| (f(p, "/measured_from") + f(iv, "/t")).round() as i64;
    for (i, iv) in mi.iter().enumerate() {
        let at = (f(&m, "/measured_from") + f(iv, "/t")).round() as i64;
        let expect: u64 = [(&parts[0], &a), (&parts[1], &b)]
            .iter()
            .flat_map(|(p, list)| {
                list.iter()
                    .filter(|x| second(p, x) == at)
                    .map(|x| u(x, "/events"))
            })
            .sum();
        assert_eq!(u(iv, "/events"), expect, "interval {i} at {at}");
    }
    let merged_parts = m["parts"].as_array().unwrap();
    assert_eq!(merged_parts.len(), 2);
    assert_eq!(merged_parts[0]["client_id"], "h1");
    assert_eq!(merged_parts[1]["client_id"], "h2");
    // The server host's figures count both clients' operations.
    let per_op = f(&m, "/server_host/cpu_us_per_op");
    let first = f(&parts[0], "/server_host/cpu_us_per_op");
    let ratio = u(&parts[0], "/events") as f64 / u(&m, "/events") as f64;
    assert!((per_op - first * ratio).abs() < 1e-6 * first.max(1.0));
    // Reports and comparisons read merged files.
    local_ok(&[
        "report".as_ref(),
        "--full".as_ref(),
        merged_path.as_os_str(),
    ]);
    let out = local_ok(&[
        "compare".as_ref(),
        merged_path.as_os_str(),
        merged_path.as_os_str(),
    ]);
    assert!(!out.stdout.is_empty());
}

/// A node_exporter stand-in that misbehaves: it answers `good` scrapes with a valid page and
/// then `bad` (None: closes without an answer).
pub(crate) fn bad_exporter(good: usize, bad: Option<&'static str>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let page = "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 1\nnode_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1\nnode_context_switches_total 5\n";
        for (i, conn) in listener.incoming().enumerate() {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let body = if i < good { Some(page) } else { bad };
            if let Some(body) = body {
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        }
    });
    format!("http://127.0.0.1:{port}/metrics")
}

#[test]
fn a_silent_garbled_or_failing_metrics_endpoint_leaves_nulls_with_a_note() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select"]).assert().success();
    // Nothing listens on port 1; garbage; valid twice and then nothing.
    for (name, url, says) in [
        (
            "refused",
            "http://127.0.0.1:1/metrics".to_string(),
            "did not answer",
        ),
        (
            "garbage",
            bad_exporter(0, Some("<html>\u{1}\u{2} not metrics</html>")),
            "lacks node_cpu_seconds_total",
        ),
        ("stops", bad_exporter(2, None), "stopped answering"),
    ] {
        let out = s.path(&format!("{name}.json"));
        let o = s
            .cmd(&[
                "run",
                "oltp_point_select",
                "--time",
                "3",
                "--server-metrics",
                &url,
                "--output",
                &out.display().to_string(),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {stderr}");
        let v = read_json(&out);
        assert_valid_results(&v);
        let host = &v["server_host"];
        let note = host["note"].as_str().unwrap_or_default();
        assert!(note.contains(says), "{name}: {host}");
        assert!(stderr.contains(says), "{name}: the run says it: {stderr}");
        assert!(host["net"].is_null(), "{name}: {host}");
        if name != "stops" {
            assert!(host["cpu_us_per_op"].is_null(), "{name}: {host}");
        }
        // The run itself stands.
        assert!(u(&v, "/events") > 0);
    }
}

#[test]
fn a_start_instant_already_past_refuses_and_merge_refuses_what_does_not_belong_together() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select"]).assert().success();
    let past = format!("{}", dbsweep::runner::epoch_now() - 30.0);
    let o = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--time",
            "1",
            "--start-at",
            &past,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--start-at") && stderr.contains("passed") && stderr.lines().count() == 1,
        "{stderr}"
    );
    // Within the tolerance it runs, from the instant it was given.
    let now = format!("{}", dbsweep::runner::epoch_now() + 0.5);
    let v = crate::util::run_results(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--time",
            "1",
            "--start-at",
            &now,
            "--client-id",
            "a",
        ],
    );
    assert_eq!(v["client_id"], "a");
    assert!((f(&v, "/measured_from") - now.parse::<f64>().unwrap()).abs() < 0.25);
    for bad in ["yesterday", "2026-11-23T07:00:00"] {
        s.cmd(&["run", "oltp_point_select", "--start-at", bad])
            .assert()
            .code(2);
    }
    s.cmd(&["run", "oltp_point_select", "--client-id", "no spaces"])
        .assert()
        .code(2);
    // merge: one file, two workloads, a merged file, the same client twice.
    let a = s.path("a.json");
    let run = |workload: &str, id: &str, out: &Path| {
        s.cmd(&[
            "run",
            workload,
            "--time",
            "1",
            "--client-id",
            id,
            "--output",
            &out.display().to_string(),
        ])
        .assert()
        .success();
    };
    run("oltp_point_select", "a", &a);
    let b = s.path("b.json");
    run("oltp_point_select", "b", &b);
    let a2 = s.path("a2.json");
    run("oltp_point_select", "a", &a2);
    let other = s.path("other.json");
    run("oltp_read_only", "c", &other);
    let merged = s.path("m.json");
    let merge = |inputs: &[&Path]| {
        let mut c = crate::util::dbsweep();
        c.arg("merge").args(inputs).arg("--output").arg(&merged);
        c.output().unwrap()
    };
    assert!(merge(&[&a, &b]).status.success());
    // A merged file as an input (not as the output too: that is refused before it is read).
    let merged_copy = s.path("m-copy.json");
    std::fs::copy(&merged, &merged_copy).unwrap();
    for (inputs, says) in [
        (vec![a.as_path()], "nothing to merge"),
        (vec![a.as_path(), other.as_path()], "workload"),
        (
            vec![merged_copy.as_path(), b.as_path()],
            "already a merged file",
        ),
        (vec![a.as_path(), a2.as_path()], "client id 'a'"),
    ] {
        let before = std::fs::read(&merged).unwrap();
        let o = merge(&inputs);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(says) && stderr.lines().count() == 1,
            "{stderr}"
        );
        assert_eq!(
            std::fs::read(&merged).unwrap(),
            before,
            "the output is left as it was"
        );
    }
}
