//! Live metrics (`--metrics-listen`): a real Prometheus (Debian's package) scrapes a run and its
//! query API gives the figures the results file has; a taken port fails before anything runs;
//! a run on each server kind serves its step's figures while it runs, without the URL's user.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dbsweep::server::ServerKind;
use serde_json::Value;

use crate::util::*;

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// GETs `url` and returns its body (bounded by a timeout).
fn get(url: &str) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = agent.get(url).call().map_err(|e| e.to_string())?;
    r.body_mut().read_to_string().map_err(|e| e.to_string())
}

/// A Prometheus server on loopback scraping `127.0.0.1:target` every 250 ms, stopped when
/// dropped.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: Scratch,
}

impl Prometheus {
    fn start(target: u16) -> Prometheus {
        let dir = Scratch::new();
        let config = dir.path("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: dbsweep\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (Debian's package) is installed: scripts/machine installs it");
        let p = Prometheus {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while get(&format!("http://127.0.0.1:{port}/-/ready")).is_err() {
            assert!(Instant::now() < deadline, "prometheus not ready in 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    /// The result of an instant query.
    fn query(&self, q: &str) -> Vec<Value> {
        self.query_at(q, None)
    }

    /// The result of an instant query evaluated at Unix time `at` (default: now).
    fn query_at(&self, q: &str, at: Option<f64>) -> Vec<Value> {
        let mut url = format!(
            "http://127.0.0.1:{}/api/v1/query?query={}",
            self.port,
            percent_encoding::utf8_percent_encode(q, percent_encoding::NON_ALPHANUMERIC)
        );
        if let Some(t) = at {
            url.push_str(&format!("&time={t}"));
        }
        let v: Value = serde_json::from_str(&get(&url).unwrap()).unwrap();
        assert_eq!(v["status"], "success", "{q}: {v}");
        v["data"]["result"].as_array().unwrap().clone()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn number(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn a_real_prometheus_scrapes_a_run_and_reads_the_results_files_figures() {
    let s = Scratch::new();
    let port = free_port();
    let prometheus = Prometheus::start(port);
    let r = run_results(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "1000",
            "--threads",
            "2",
            "--time",
            "10",
            "--rate",
            "300",
            "--metrics-listen",
            &port.to_string(),
        ],
    );
    // The scrapes parsed (Prometheus' OpenMetrics parser): the target was up.
    let up = prometheus.query("max_over_time(up{job=\"dbsweep\"}[10m])");
    assert_eq!(number(&up[0]["value"][1]), 1.0, "{up:?}");
    // Every count Prometheus stored is one the results file's intervals add up to: the
    // endpoint serves exactly what the reporter measured, a tick at a time.
    let mut sums = vec![0u64];
    for iv in r["intervals"].as_array().unwrap() {
        sums.push(sums.last().unwrap() + iv["events"].as_u64().unwrap());
    }
    let series = prometheus.query(
        "dbsweep_events_total{step=\"oltp_point_select\",target=\"sqlite\",clients=\"2\"}[10m]",
    );
    assert_eq!(series.len(), 1, "{series:?}");
    let samples = series[0]["values"].as_array().unwrap();
    assert!(samples.len() >= 10, "few scrapes: {samples:?}");
    for v in samples {
        let n = number(&v[1]) as u64;
        assert!(sums.contains(&n), "{n} is not a sum of intervals {sums:?}");
    }
    assert!(number(&samples.last().unwrap()[1]) > 0.0);
    // The rate Prometheus gives is the results file's (within 2%).
    let rate = prometheus.query(
        "last_over_time(dbsweep_events_total[10m]) / last_over_time(dbsweep_measured_seconds[10m])",
    );
    let rate = number(&rate[0]["value"][1]);
    let tps = f(&r, "/tps");
    assert!(
        (rate / tps - 1.0).abs() < 0.02,
        "prometheus says {rate}/s, the results file {tps}/s"
    );
    // Every query of the example Grafana dashboard runs and finds the run's series, at the
    // time of the last scrape that saw it.
    let last = samples.last().unwrap()[0].as_f64().unwrap();
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/live-metrics/grafana-dashboard.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut exprs = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let q = t["expr"].as_str().unwrap().replace("$job", "dbsweep");
            let found = prometheus.query_at(&q, Some(last));
            assert!(!found.is_empty(), "{}: {q} found nothing", panel["title"]);
            exprs += 1;
        }
    }
    assert!(exprs >= 7);
    // Latency as a histogram: every event in a bucket.
    let count = prometheus.query("last_over_time(dbsweep_latency_seconds_count[10m])");
    let inf = prometheus.query("last_over_time(dbsweep_latency_seconds_bucket{le=\"+Inf\"}[10m])");
    assert_eq!(number(&count[0]["value"][1]), number(&inf[0]["value"][1]));
}

#[test]
fn a_taken_port_fails_before_anything_runs() {
    let s = Scratch::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "100",
        ])
        .args(["--time", "1", "--metrics-listen", &port, "--output"])
        .arg(s.path("r.json"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("--metrics-listen")
            && err.contains("cannot listen")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(!s.path("r.json").exists(), "a results file was written");
    assert!(!s.db().exists(), "the database was touched");
    let bad = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--metrics-listen",
            "no-such-host.invalid:x",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert!(err.contains("metrics-listen"), "{err}");
}

/// The endpoint's text while `url`'s run is measuring, once it has counted events.
fn scrape_while_running(s: &Scratch, url: &str) -> String {
    let port = free_port();
    let mut cmd = dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args([
            "run",
            "oltp_point_select",
            "--prepare",
            "--force",
            "--table-size",
            "1000",
        ])
        .args(["--threads", "3", "--time", "6", "--report-interval", "1"])
        .args(["--metrics-listen", &port.to_string(), "--target", url])
        .stdout(Stdio::null());
    let (mut child, _lines) = spawn_measuring(&mut cmd, "[ 1s ]");
    let text = get(&format!("http://127.0.0.1:{port}/metrics"));
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    text.unwrap()
}

per_server!(a_run_serves_its_steps_figures_on, |kind: ServerKind| {
    let s = Scratch::new();
    let server = start(kind);
    let text = scrape_while_running(&s, &server.url);
    let dialect = if kind == ServerKind::Postgres {
        "postgres"
    } else {
        "mysql"
    };
    let labels = format!(
        "{{step=\"oltp_point_select\",target=\"{dialect}\",configuration=\"\",clients=\"3\"}}"
    );
    let events = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("dbsweep_events_total{labels} ")))
        .unwrap_or_else(|| panic!("no events series: {text}"));
    assert!(events.parse::<u64>().unwrap() > 0, "{text}");
    assert!(
        text.contains(&format!("dbsweep_clients{labels} 3")),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    // The URL's user (and any password) is nowhere in it.
    let user = server
        .url
        .split("://")
        .nth(1)
        .unwrap()
        .split(['@', ':'])
        .next()
        .unwrap();
    assert!(!text.contains(&format!("\"{user}\"")), "{text}");
});

#[test]
fn a_sqlite_run_serves_its_steps_figures() {
    let s = Scratch::new();
    let text = scrape_while_running(&s, &s.target());
    assert!(text.contains("target=\"sqlite\""), "{text}");
    assert!(
        text.contains("dbsweep_latency_seconds_bucket{le=\"+Inf\""),
        "{text}"
    );
}

/// Asks the endpoint at `port` of `child` (a dbsweep run) until a line starting with
/// `series` counts more than 0, for at most `bound`; that text (the child killed on a timeout).
fn served(child: &mut Child, port: u16, series: &str, bound: Duration) -> String {
    let deadline = Instant::now() + bound;
    loop {
        if let Ok(t) = get(&format!("http://127.0.0.1:{port}/metrics"))
            && t.lines()
                .any(|l| l.starts_with(series) && !l.ends_with(" 0"))
        {
            return t;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{series} not served in {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `cmd` started with its output dropped.
fn quiet_spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The text a drop-in's run serves at `port` once it has counted events.
fn scrape_dropin(cmd: &mut Command, port: u16) -> String {
    let mut child = quiet_spawn(cmd);
    let text = served(
        &mut child,
        port,
        "dbsweep_events_total",
        Duration::from_secs(60),
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    text
}

/// sysbench's and pgbench's personalities take `--metrics-listen` too.
#[test]
fn the_drop_ins_serve_live_metrics_too() {
    let s = Scratch::new();
    let sysbench = |args: &[&str]| {
        let mut c = dbsweep_std();
        c.current_dir(s.dir.path())
            .args(["sysbench", "oltp_point_select", "--table-size=1000"])
            .arg(format!("--target={}", s.target()))
            .args(args);
        c
    };
    assert!(sysbench(&["prepare"]).output().unwrap().status.success());
    let port = free_port();
    let text = scrape_dropin(
        &mut sysbench(&[
            "--time=4",
            "--report-interval=1",
            &format!("--metrics-listen={port}"),
            "run",
        ]),
        port,
    );
    assert!(
        text.contains("dbsweep_events_total{step=\"oltp_point_select\",target=\"sqlite\""),
        "{text}"
    );

    let server = start(ServerKind::Postgres);
    let pgbench = |args: &[&str]| {
        let mut c = dbsweep_std();
        c.current_dir(s.dir.path())
            .args([
                "pgbench",
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "sbtest",
            ])
            .args(args)
            .arg("sbtest");
        c
    };
    assert!(
        pgbench(&["-i", "-q", "-s", "1"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let port = free_port();
    let text = scrape_dropin(
        &mut pgbench(&[
            "-c",
            "2",
            "-T",
            "4",
            "-P",
            "1",
            &format!("--metrics-listen={port}"),
        ]),
        port,
    );
    assert!(
        text.contains("dbsweep_events_total{step=\"pgbench_tpcb_like\",target=\"postgres\",configuration=\"\",clients=\"2\"}"),
        "{text}"
    );
}

/// A sweep serves every step's series under its step, target, configuration and client
/// count, for the whole sweep (the plan's `metrics_listen`); a step may not set its own.
#[test]
fn a_sweep_serves_each_steps_series_under_its_labels() {
    let s = Scratch::new();
    let port = free_port();
    let plan = s.path("p.toml");
    let text = format!(
        "name = \"t\"\nclients = [1, 2]\ntable_size = 1000\nread_time = 3\nwrite_time = 3\n\
         metrics_listen = \"127.0.0.1:{port}\"\n\n[[steps]]\nload = true\n\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n"
    );
    std::fs::write(&plan, &text).unwrap();
    let mut cmd = dbsweep_std();
    cmd.current_dir(s.dir.path())
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(s.path("sweep"));
    // The second cell's step, counting, with the first cell's series still served.
    let second = "dbsweep_events_total{step=\"point\",target=\"sqlite\",configuration=\"default\",clients=\"2\"}";
    let first = "dbsweep_events_total{step=\"point\",target=\"sqlite\",configuration=\"default\",clients=\"1\"}";
    let mut child = quiet_spawn(&mut cmd);
    let served = served(&mut child, port, second, Duration::from_secs(120));
    assert!(child.wait().unwrap().success());
    let events = |labels: &str| -> u64 {
        served
            .lines()
            .find_map(|l| l.strip_prefix(labels)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {labels} in {served}"))
    };
    let done = read_json(&s.path("sweep/steps/sqlite.default.c1/02-point.json"));
    assert_eq!(
        events(first),
        u(&done, "/results/events"),
        "the first cell's final count"
    );
    assert!(served.contains(
        "dbsweep_clients{step=\"point\",target=\"sqlite\",configuration=\"default\",clients=\"1\"} 0"
    ));

    // A step's own metrics_listen is refused, naming where it belongs.
    let step_level = text.replace(&format!("metrics_listen = \"127.0.0.1:{port}\"\n"), "")
        + "options = { metrics_listen = \"9\" }\n";
    std::fs::write(&plan, step_level).unwrap();
    let out = dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(&plan)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("metrics_listen at the plan's top"), "{err}");
}

/// A capacity search serves each probe as a step of its own.
#[test]
fn a_capacity_search_serves_each_probe() {
    let s = Scratch::new();
    let port = free_port();
    let mut cmd = dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args([
            "capacity",
            "oltp_point_select",
            "--target",
            "mock://?service_us=2000",
        ])
        .args(["--threads", "4", "--percentile", "90", "--limit", "10ms"])
        .args(["--max-probes", "3", "--metrics-listen", &port.to_string()]);
    let second = "dbsweep_events_total{step=\"oltp_point_select probe 2\",target=\"mock\"";
    let mut child = quiet_spawn(&mut cmd);
    let text = served(&mut child, port, second, Duration::from_secs(60));
    let _ = child.wait();
    assert!(
        text.contains("dbsweep_events_total{step=\"oltp_point_select probe 1\",target=\"mock\""),
        "{text}"
    );
}

/// The endpoint under hostile clients, with the run's file table lowered to 48 (fewer than the endpoint's 64 connections): a client that
/// pipelines requests and never reads, one whose request line never ends, then 600 idle
/// connections (more than the file table holds). After each, another scraper is answered; the
/// run is never ended by them and writes its results.
#[test]
fn hostile_scrapers_neither_end_the_run_nor_stall_the_others() {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::os::unix::process::CommandExt;
    let s = Scratch::new();
    let port = free_port();
    let mut cmd = dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args(["run", "oltp_point_select", "--prepare", "--force"])
        .args(["--table-size", "1000", "--threads", "1", "--time", "25"])
        .args(["--report-interval", "1", "--output", "r.json"])
        .args([
            "--metrics-listen",
            &port.to_string(),
            "--target",
            &s.target(),
        ])
        .stdout(Stdio::null());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 48,
                rlim_max: 48,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (mut child, lines) = spawn_measuring(&mut cmd, "[ 1s ]");
    let drain = std::thread::spawn(move || lines.collect::<Vec<_>>());
    let url = format!("http://127.0.0.1:{port}/metrics");
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let connect = || TcpStream::connect_timeout(&addr, Duration::from_secs(2));
    let answered = |when: &str| {
        let text = get(&url).unwrap_or_else(|e| panic!("{when}: no answer: {e}"));
        assert!(text.contains("dbsweep_events_total"), "{when}: {text}");
    };

    // Requests pipelined and never read.
    let mut pipeliner = connect().unwrap();
    pipeliner
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = pipeliner.write_all(&b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(20_000));
    answered("beside a client that pipelines and never reads");

    // A request line that never ends: refused past the bound, never read whole.
    let mut endless = connect().unwrap();
    endless
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    endless
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut refused = false;
    for _ in 0..256 {
        if endless.write_all(&[b'a'; 4096]).is_err() {
            refused = true;
            break;
        }
    }
    let mut reply = Vec::new();
    let _ = endless.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        refused || reply.starts_with("HTTP/1.1 431"),
        "a 1 MB request line was neither refused nor cut: {reply:?}"
    );
    answered("after a request line that never ends");

    // Idle connections, more than the file table holds.
    let mut idle = Vec::new();
    for _ in 0..600 {
        if let Ok(c) = connect() {
            idle.push(c);
        }
    }
    assert!(idle.len() > 48, "only {} idle connections made", idle.len());
    answered("beside 600 idle connections");
    drop((idle, pipeliner, endless));
    answered("after them");

    let status = child.wait().unwrap();
    let stderr = drain.join().unwrap();
    assert!(status.success(), "{status}: {stderr:?}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(s.dir.path().join("r.json")).unwrap())
            .unwrap();
    assert!(r["tps"].as_f64().unwrap() > 0.0, "{r}");
}

/// `--metrics-listen=0` takes a free port; the drop-ins say which on stderr (the option is
/// dbsweep's own, so no driver of the peer's reads that line), and it served.
#[test]
fn the_drop_ins_say_which_port_they_took() {
    let s = Scratch::new();
    let mut prepare = dbsweep_std();
    prepare
        .current_dir(s.dir.path())
        .args(["sysbench", "oltp_point_select", "--table-size=100"])
        .arg(format!("--target={}", s.target()))
        .arg("prepare");
    assert!(prepare.output().unwrap().status.success());
    let mut cmd = dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args([
            "sysbench",
            "oltp_point_select",
            "--table-size=100",
            "--time=3",
        ])
        .args(["--report-interval=1", "--metrics-listen=0"])
        .arg(format!("--target={}", s.target()))
        .arg("run")
        .stdout(Stdio::null());
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let line = stderr.next().unwrap().unwrap();
    let port: u16 = line
        .strip_prefix("dbsweep: live metrics at http://127.0.0.1:")
        .and_then(|r| r.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    assert_ne!(port, 0);
    let text = get(&format!("http://127.0.0.1:{port}/metrics")).unwrap();
    assert!(text.contains("dbsweep_"), "{text}");
    let rest: Vec<String> = stderr.map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success(), "{rest:?}");
}
