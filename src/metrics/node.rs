//! The database host's CPU, disk and network from Prometheus node_exporter
//! (`--server-metrics http://HOST:9100/metrics`), which database hosts commonly run: scraped
//! once a second over the measured part and turned into the local sampler's per-operation
//! fields. They are host-level figures (the whole machine, every process on it), not the
//! server process's.
//!
//! A missing series, an endpoint that does not answer (each scrape has a bound) or one that
//! stops answering mid-step leaves the figures it would have given null, with a note; the
//! run goes on.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::results::figures::HostFigures;
use crate::results::figures::NetFigures;

/// The longest a scrape may take (node_exporter answers in milliseconds).
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);
/// The most bytes of one scrape read (a node_exporter page is some 100 KB).
const SCRAPE_LIMIT: u64 = 16 << 20;

/// One scrape's counters.
#[derive(Clone, Debug, Default)]
struct Reading {
    at: Option<Instant>,
    /// CPU seconds by mode, summed over the CPUs.
    cpu: BTreeMap<String, f64>,
    cpus: usize,
    ctxt: Option<f64>,
    disks: BTreeMap<String, [f64; 5]>,
    /// Received and sent bytes, and the speed in bytes/s when known.
    nets: BTreeMap<String, (f64, f64, Option<f64>)>,
}

/// Disk counters, in the order of `Reading::disks`.
const DISK_SERIES: [&str; 5] = [
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_disk_read_bytes_total",
    "node_disk_written_bytes_total",
    "node_disk_io_time_seconds_total",
];

/// Reads the text exposition format (with a maintained parser) into the counters used here.
fn parse(text: &str) -> Result<Reading, String> {
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .map_err(|e| format!("not the Prometheus text format: {e}"))?;
    let mut r = Reading::default();
    let mut cpus = std::collections::BTreeSet::new();
    for s in &scrape.samples {
        let v = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            _ => continue,
        };
        if !v.is_finite() {
            continue;
        }
        let label = |name: &str| s.labels.get(name).map(str::to_string);
        match s.metric.as_str() {
            "node_cpu_seconds_total" => {
                if let (Some(cpu), Some(mode)) = (label("cpu"), label("mode")) {
                    cpus.insert(cpu);
                    *r.cpu.entry(mode).or_insert(0.0) += v;
                }
            }
            "node_context_switches_total" => r.ctxt = Some(v),
            "node_network_receive_bytes_total" => {
                if let Some(d) = label("device") {
                    r.nets.entry(d).or_default().0 = v;
                }
            }
            "node_network_transmit_bytes_total" => {
                if let Some(d) = label("device") {
                    r.nets.entry(d).or_default().1 = v;
                }
            }
            "node_network_speed_bytes" => {
                if let Some(d) = label("device") {
                    r.nets.entry(d).or_default().2 = (v > 0.0).then_some(v);
                }
            }
            m => {
                if let (Some(i), Some(d)) =
                    (DISK_SERIES.iter().position(|x| *x == m), label("device"))
                {
                    r.disks.entry(d).or_default()[i] = v;
                }
            }
        }
    }
    r.cpus = cpus.len();
    Ok(r)
}

/// GETs `url` within the scrape's bound.
fn fetch(agent: &ureq::Agent, url: &str) -> Result<String, String> {
    let mut resp = agent.get(url).call().map_err(|e| e.to_string())?;
    resp.body_mut()
        .with_config()
        .limit(SCRAPE_LIMIT)
        .read_to_string()
        .map_err(|e| e.to_string())
}

fn scrape(agent: &ureq::Agent, url: &str) -> Result<Reading, String> {
    let mut r = parse(&fetch(agent, url)?)?;
    r.at = Some(Instant::now());
    Ok(r)
}

/// What the scraping thread ends with: the first and last answered scrapes, how many
/// answered, and the first failure.
struct Scraped {
    first: Option<Reading>,
    last: Option<Reading>,
    answered: u32,
    failed: u32,
    failure: Option<String>,
    /// Seconds from the first scrape to the first failure after it.
    stopped_at: Option<f64>,
    /// Seconds from the first scrape to the last attempt (the step's measured part).
    span_s: f64,
}

/// A running scraper thread.
pub struct NodeScraper {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<Scraped>,
    source: String,
}

impl NodeScraper {
    /// Scrapes `url` once a second from `from` on (the measured part's start) until finished.
    pub fn start(url: &str, from: super::MeasureStart) -> NodeScraper {
        let (stop, stopped) = mpsc::channel::<()>();
        let source = crate::db::redact_url(url);
        let url = url.to_string();
        let handle = std::thread::spawn(move || {
            let mut s = Scraped {
                first: None,
                last: None,
                answered: 0,
                failed: 0,
                failure: None,
                stopped_at: None,
                span_s: 0.0,
            };
            if !from.wait(&stopped) {
                return s;
            }
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(SCRAPE_TIMEOUT))
                .build()
                .into();
            let begun = Instant::now();
            let once = |s: &mut Scraped| match scrape(&agent, &url) {
                Ok(r) => {
                    s.answered += 1;
                    if s.first.is_none() {
                        s.first = Some(r);
                    } else {
                        s.last = Some(r);
                    }
                }
                Err(e) => {
                    s.failed += 1;
                    if s.first.is_some() && s.stopped_at.is_none() {
                        s.stopped_at = Some(begun.elapsed().as_secs_f64());
                    }
                    s.failure.get_or_insert(e);
                }
            };
            once(&mut s);
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(1))
            {
                once(&mut s);
            }
            once(&mut s);
            s.span_s = begun.elapsed().as_secs_f64();
            s
        });
        NodeScraper {
            stop,
            handle,
            source,
        }
    }

    /// Stops scraping; the step's figures for `ops` operations. `devices`: the disk and the
    /// network interface to report (`--server-device`, `--server-net-device`; None: the
    /// busiest); `link_mbit`: the link speed when node_exporter does not know it.
    pub fn finish(
        self,
        ops: u64,
        devices: (Option<&str>, Option<&str>),
        link_mbit: Option<f64>,
    ) -> HostFigures {
        let _ = self.stop.send(());
        let scraped = self.handle.join().unwrap_or(Scraped {
            first: None,
            last: None,
            answered: 0,
            failed: 1,
            failure: Some("the scraper thread failed".into()),
            stopped_at: None,
            span_s: 0.0,
        });
        figures(&self.source, &scraped, ops, devices, link_mbit)
    }
}

fn figures(
    source: &str,
    s: &Scraped,
    ops: u64,
    (device, net_device): (Option<&str>, Option<&str>),
    link_mbit: Option<f64>,
) -> HostFigures {
    let mut f = HostFigures {
        source: source.to_string(),
        scope: "host".into(),
        scrapes: s.answered,
        ..HostFigures::default()
    };
    let (Some(a), Some(b)) = (&s.first, &s.last) else {
        f.note = Some(match &s.failure {
            Some(e) => format!("{source} did not answer ({e}): no figures of the server's host"),
            None => format!("{source}: fewer than two scrapes in the step: no figures"),
        });
        return f;
    };
    let mut notes = Vec::new();
    if let Some(at) = s.stopped_at {
        notes.push(format!(
            "{source} stopped answering {at:.0} s into the step ({}): the figures cover the seconds before",
            s.failure.as_deref().unwrap_or("no answer")
        ));
    } else if s.failed > 0 {
        notes.push(format!(
            "{} of {} scrapes failed ({})",
            s.failed,
            s.failed + s.answered,
            s.failure.as_deref().unwrap_or("")
        ));
    }
    let secs = match (a.at, b.at) {
        (Some(x), Some(y)) => y.duration_since(x).as_secs_f64(),
        _ => 0.0,
    };
    f.seconds = secs;
    // The operations of the seconds the scrapes covered: when they stopped early, the
    // step's operations scaled to those seconds (as if the run's rate held).
    let ops = if s.stopped_at.is_some() && s.span_s > secs && s.span_s > 0.0 {
        ops as f64 * secs / s.span_s
    } else {
        ops as f64
    };
    let mut between = Between {
        a,
        b,
        source,
        secs,
        ops,
        missing: Vec::new(),
        backwards: Vec::new(),
        notes,
    };
    between.cpu(&mut f);
    between.context_switches(&mut f);
    between.disk(&mut f, device);
    between.network(&mut f, net_device, link_mbit);
    let Between {
        mut notes,
        missing,
        backwards,
        ..
    } = between;
    if !missing.is_empty() {
        notes.push(format!("{source} lacks {}", missing.join(", ")));
    }
    if !backwards.is_empty() {
        notes.push(format!(
            "{source}: {} went backwards between the step's scrapes (node_exporter restarted \
             or the host rebooted?): no figures from them",
            backwards.join(", ")
        ));
    }
    f.note = (!notes.is_empty()).then(|| notes.join("; "));
    f
}

/// The two scrapes that bound a step, and what their differences left out.
struct Between<'a> {
    a: &'a Reading,
    b: &'a Reading,
    source: &'a str,
    secs: f64,
    /// The operations of the seconds between them.
    ops: f64,
    /// Metrics the exporter does not have.
    missing: Vec<&'static str>,
    /// Counters that went backwards between the scrapes (node_exporter restarted, the host
    /// rebooted, a device came back): their figures are left out, not counted as zero.
    backwards: Vec<String>,
    notes: Vec<String>,
}

impl Between<'_> {
    fn per_o(&self, delta: f64) -> Option<f64> {
        (self.ops > 0.0 && self.secs > 0.0).then(|| delta / self.ops)
    }

    fn went_back(&mut self, what: &str) {
        if !self.backwards.iter().any(|w| w == what) {
            self.backwards.push(what.to_string());
        }
    }

    /// CPU: busy is every mode but idle and iowait, as the local sampler counts it.
    fn cpu(&mut self, f: &mut HostFigures) {
        let (a, b) = (self.a, self.b);
        if a.cpu.is_empty() || b.cpu.is_empty() {
            self.missing.push("node_cpu_seconds_total");
        } else if b
            .cpu
            .iter()
            .any(|(m, y)| a.cpu.get(m).is_some_and(|x| y < x))
        {
            self.went_back("node_cpu_seconds_total");
        } else {
            let d = |mode: &str| {
                (b.cpu.get(mode).copied().unwrap_or(0.0) - a.cpu.get(mode).copied().unwrap_or(0.0))
                    .max(0.0)
            };
            let counted: f64 = b.cpu.keys().map(|m| d(m)).sum();
            let idle = d("idle") + d("iowait");
            let ticks = counted - idle;
            // As the local sampler counts it: a virtual machine's kernel loses ticks while busy,
            // and the CPUs' wall time less their (exactly measured) idle time is then the busier
            // figure; the lost time is spread over user and system as the ticks were.
            let wall = if b.cpu.contains_key("idle") {
                self.secs * b.cpus.max(1) as f64
            } else {
                0.0
            };
            let total = counted.max(wall);
            let busy = ticks.max(wall - idle).min(total);
            let scale = if ticks > 0.0 { busy / ticks } else { 1.0 };
            let pct = |x: f64| (total > 0.0).then(|| x * 100.0 / total);
            f.cpus = Some(b.cpus);
            f.cpu_us_per_op = self.per_o(busy * 1e6);
            f.cpu_user_pct = pct((d("user") + d("nice")) * scale);
            f.cpu_system_pct = pct((d("system") + d("irq") + d("softirq") + d("steal")) * scale);
            f.cpu_iowait_pct = pct(d("iowait"));
        }
    }

    fn context_switches(&mut self, f: &mut HostFigures) {
        let (a, b) = (self.a, self.b);
        match (a.ctxt, b.ctxt) {
            (Some(x), Some(y)) if y < x => self.went_back("node_context_switches_total"),
            (Some(x), Some(y)) => f.cs_per_o = self.per_o(y - x),
            _ => self.missing.push("node_context_switches_total"),
        }
    }

    /// A disk's reads, writes, bytes read and written and busy time between the scrapes.
    fn disk_delta(&mut self, name: &str) -> Option<[f64; 5]> {
        let (x, y) = (self.a.disks.get(name)?, self.b.disks.get(name)?);
        if (0..5).any(|i| y[i] < x[i]) {
            self.went_back(&format!("node_disk_* of {name}"));
            return None;
        }
        let mut d = [0.0; 5];
        for i in 0..5 {
            d[i] = y[i] - x[i];
        }
        Some(d)
    }

    /// `--server-device`, else the busiest disk.
    fn disk(&mut self, f: &mut HostFigures, device: Option<&str>) {
        let (a, b, source) = (self.a, self.b, self.source);
        let disk = match device {
            Some(name) => match self.disk_delta(name) {
                Some(d) => Some((name.to_string(), d)),
                None if b.disks.contains_key(name) && a.disks.contains_key(name) => None,
                None => {
                    self.notes.push(format!(
                        "--server-device {name}: {source} has no disk of that name (it has: {})",
                        b.disks.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                    None
                }
            },
            None => b
                .disks
                .keys()
                .filter_map(|n| self.disk_delta(n).map(|d| (n.clone(), d)))
                .max_by(|x, y| x.1[4].total_cmp(&y.1[4]).then(y.0.cmp(&x.0))),
        };
        match disk {
            Some((name, d)) => {
                f.device = Some(name);
                f.r_per_o = self.per_o(d[0]);
                f.w_per_o = self.per_o(d[1]);
                f.rkb_per_o = self.per_o(d[2] / 1024.0);
                f.wkb_per_o = self.per_o(d[3] / 1024.0);
                f.device_busy_pct =
                    (self.secs > 0.0).then(|| (d[4] / self.secs * 100.0).min(100.0));
            }
            None if device.is_none() => self.missing.push("node_disk_*"),
            None => {}
        }
    }

    /// The network: `--server-net-device`, else the interface that carried the most bytes (the
    /// loopback only when alone); of interfaces within 1% of that (a bridge and its one port),
    /// one whose link speed is known.
    fn network(&mut self, f: &mut HostFigures, net_device: Option<&str>, link_mbit: Option<f64>) {
        let (a, b, source) = (self.a, self.b, self.source);
        let deltas: Vec<(&String, f64, f64, Option<f64>)> = b
            .nets
            .iter()
            .filter_map(|(name, y)| {
                let x = a.nets.get(name)?;
                if y.0 < x.0 || y.1 < x.1 {
                    self.went_back(&format!("node_network_*_bytes_total of {name}"));
                    return None;
                }
                Some((name, y.0 - x.0, y.1 - x.1, y.2))
            })
            .collect();
        let net = match net_device {
            Some(want) => {
                let found = deltas.iter().find(|d| d.0 == want).copied();
                if found.is_none() && !(a.nets.contains_key(want) && b.nets.contains_key(want)) {
                    self.notes.push(format!(
                    "--server-net-device {want}: {source} has no interface of that name (it has: {})",
                    b.nets.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
                }
                found
            }
            None => {
                let most = deltas
                    .iter()
                    .filter(|d| d.0 != "lo")
                    .map(|d| d.1 + d.2)
                    .fold(0.0, f64::max);
                deltas
                    .iter()
                    .filter(|d| d.0 != "lo" && d.1 + d.2 >= most * 0.99)
                    .max_by(|x, y| {
                        x.3.is_some()
                            .cmp(&y.3.is_some())
                            .then((x.1 + x.2).total_cmp(&(y.1 + y.2)))
                            .then(y.0.cmp(x.0))
                    })
                    .or_else(|| deltas.iter().find(|d| d.0 == "lo"))
                    .copied()
            }
        };
        match net {
            Some((name, rx, tx, speed)) => {
                let link = match (speed, link_mbit) {
                    (Some(bytes), _) => Some((bytes * 8.0 / 1e6, "node_exporter")),
                    (None, Some(m)) => Some((m, "--link-speed")),
                    (None, None) => None,
                };
                f.net = NetFigures::of(name, (rx, tx), self.secs, self.ops, link);
            }
            None if net_device.is_none() => self.missing.push("node_network_*_bytes_total"),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exposition(cpu_user: f64, idle: f64, cs: f64, rx: f64, io_s: f64) -> String {
        format!(
            "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} {idle}
node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} {cpu_user}
node_cpu_seconds_total{{cpu=\"0\",mode=\"system\"}} 50
node_cpu_seconds_total{{cpu=\"0\",mode=\"iowait\"}} 5
node_cpu_seconds_total{{cpu=\"1\",mode=\"idle\"}} {idle}
node_cpu_seconds_total{{cpu=\"1\",mode=\"user\"}} {cpu_user}
node_cpu_seconds_total{{cpu=\"1\",mode=\"system\"}} 50
node_cpu_seconds_total{{cpu=\"1\",mode=\"iowait\"}} 5
# TYPE node_context_switches_total counter
node_context_switches_total {cs}
# TYPE node_disk_io_time_seconds_total counter
node_disk_io_time_seconds_total{{device=\"vda\"}} {io_s}
node_disk_io_time_seconds_total{{device=\"vdb\"}} 1
node_disk_reads_completed_total{{device=\"vda\"}} 100
node_disk_writes_completed_total{{device=\"vda\"}} 200
node_disk_read_bytes_total{{device=\"vda\"}} 4096
node_disk_written_bytes_total{{device=\"vda\"}} 8192
node_network_receive_bytes_total{{device=\"lo\"}} 9e9
node_network_transmit_bytes_total{{device=\"lo\"}} 9e9
node_network_receive_bytes_total{{device=\"eth0\"}} {rx}
node_network_transmit_bytes_total{{device=\"eth0\"}} 1000
node_network_speed_bytes{{device=\"eth0\"}} 1.25e+08
"
        )
    }

    fn scraped(a: &str, b: &str, secs: u64) -> Scraped {
        let t0 = Instant::now();
        let mut first = parse(a).unwrap();
        first.at = Some(t0);
        let mut last = parse(b).unwrap();
        last.at = Some(t0 + Duration::from_secs(secs));
        Scraped {
            first: Some(first),
            last: Some(last),
            answered: 2,
            failed: 0,
            failure: None,
            stopped_at: None,
            span_s: secs as f64,
        }
    }

    #[test]
    fn counters_that_go_backwards_leave_their_figures_out_with_a_note() {
        // node_exporter restarted between the scrapes: CPU, switches and eth0's bytes lower.
        let s = scraped(
            &exposition(100.0, 1000.0, 10_000.0, 5e6, 10.0),
            &exposition(4.0, 6.0, 500.0, 1e3, 15.0),
            10,
        );
        let f = figures("u", &s, 1000, (None, Some("eth0")), None);
        assert_eq!(
            (f.cpu_us_per_op, f.cpu_user_pct, f.cs_per_o),
            (None, None, None)
        );
        assert!(f.net.is_none(), "{:?}", f.net);
        let note = f.note.unwrap();
        assert!(
            note.contains("node_cpu_seconds_total, node_context_switches_total")
                && note.contains("eth0")
                && note.contains("went backwards")
                && !note.contains("no interface of that name"),
            "{note}"
        );
        // The disk's counters went on: its figures stay.
        assert!(f.device_busy_pct.is_some());
    }

    #[test]
    fn two_scrapes_give_the_local_samplers_fields_per_operation() {
        // 10 s, 1000 ops: 2 CPUs x 4 s of user and 6 s idle; 5000 switches; eth0 received
        // 1 MB; vda busy 5 s.
        let s = scraped(
            &exposition(100.0, 1000.0, 10_000.0, 0.0, 10.0),
            &exposition(104.0, 1006.0, 15_000.0, 1_048_576.0, 15.0),
            10,
        );
        let f = figures("http://h:9100/metrics", &s, 1000, (None, None), None);
        assert_eq!(f.scope, "host");
        assert_eq!(f.cpus, Some(2));
        // 8 s of busy CPU over 1000 ops: 8 ms each; user 8 of the 20 CPU-seconds.
        assert!((f.cpu_us_per_op.unwrap() - 8000.0).abs() < 1e-6);
        assert!((f.cpu_user_pct.unwrap() - 40.0).abs() < 1e-9);
        // Ticks lost while busy: the CPUs counted 4 s busy and 6 s idle each of 12 s.
        let lost = scraped(
            &exposition(100.0, 1000.0, 0.0, 0.0, 0.0),
            &exposition(104.0, 1006.0, 0.0, 0.0, 0.0),
            12,
        );
        let g = figures("u", &lost, 1000, (None, None), None);
        // 24 CPU-seconds of wall time less 12 idle: 12 s busy, 12 ms per op.
        assert!((g.cpu_us_per_op.unwrap() - 12_000.0).abs() < 1e-6);
        assert!((g.cpu_user_pct.unwrap() - 50.0).abs() < 1e-9);
        assert!((f.cs_per_o.unwrap() - 5.0).abs() < 1e-9);
        assert_eq!(f.device.as_deref(), Some("vda"), "the busiest disk");
        assert!((f.device_busy_pct.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(f.r_per_o, Some(0.0));
        let net = f.net.unwrap();
        assert_eq!(net.device, "eth0", "not the loopback");
        assert!((net.rx_kb_per_o - 1.024).abs() < 1e-9);
        // 1 Gbit/s (1.25e8 bytes/s): 1 MB in 10 s is 0.0839%.
        assert_eq!(net.link_mbit, Some(1000.0));
        assert!((net.busy_pct.unwrap() - 8_388_608.0 / 10.0 / 1e9 * 100.0).abs() < 1e-9);
        assert_eq!(f.note, None);
        // A named disk that the host lacks: said, not guessed.
        let f = figures("u", &s, 1000, (Some("nvme0n1"), Some("eth9")), None);
        assert_eq!((f.device, f.net), (None, None));
        let note = f.note.unwrap();
        assert!(note.contains("nvme0n1") && note.contains("eth9"), "{note}");
        // A named interface, even the loopback; a link speed given where none is known.
        let f = figures("u", &s, 1000, (None, Some("lo")), Some(100.0));
        let lo = f.net.unwrap();
        assert_eq!((lo.device.as_str(), lo.link_mbit), ("lo", Some(100.0)));
        assert_eq!(lo.link_source.as_deref(), Some("--link-speed"));
    }

    #[test]
    fn missing_series_and_silent_endpoints_leave_nulls_with_a_note() {
        let only_cpu = "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 1\n";
        let s = scraped(only_cpu, only_cpu, 5);
        let f = figures("u", &s, 10, (None, None), None);
        assert_eq!(f.cpu_us_per_op, Some(0.0));
        assert_eq!((f.cs_per_o, f.net.is_none(), f.device), (None, true, None));
        let note = f.note.unwrap();
        assert!(note.contains("node_context_switches_total"), "{note}");
        assert!(note.contains("node_network"), "{note}");
        // Garbage parses to no series at all.
        let g = parse("<html>502 Bad Gateway</html>\n\u{0}\u{1}").unwrap_or_default();
        assert!(g.cpu.is_empty() && g.ctxt.is_none());
        let none = Scraped {
            first: None,
            last: None,
            answered: 0,
            failed: 3,
            failure: Some("connection refused".into()),
            stopped_at: None,
            span_s: 0.0,
        };
        let f = figures("http://h:9100/metrics", &none, 10, (None, None), None);
        assert_eq!((f.cpu_us_per_op, f.scrapes), (None, 0));
        assert!(f.note.unwrap().contains("connection refused"));
    }
}
