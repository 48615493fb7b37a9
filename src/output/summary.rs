//! dbsweep's own text: the interval line and the closing summary.

use std::fmt::Write as _;

use crate::results::Results;
use crate::results::figures::Interval;

/// The per-interval line, with what sysbench's line has plus the rows of scans.
pub fn interval_line(iv: &Interval) -> String {
    let mut line = super::shape::line(iv, 95, iv.p95_ms);
    if let (Some(nopm), Some(p95)) = (iv.nopm, iv.new_order_p95_ms) {
        let _ = write!(line, " NOPM: {nopm:.0} new-order lat (ms,95%): {p95:.2}");
    }
    if let Some(p) = iv.phase {
        let _ = write!(line, " phase: {p}");
    }
    line
}

/// The final report: sysbench's sections, with every percentile.
/// The server host's figures from node_exporter, and the client's network, per event.
fn network_summary(s: &mut String, r: &Results) {
    let net_line = |n: &crate::results::figures::NetFigures| {
        let link = match (n.busy_pct, n.link_mbit, &n.link_source) {
            (Some(b), Some(m), Some(src)) => format!("; {b:.2}% of {m:.0} Mbit/s ({src})"),
            _ => "; link speed unknown (--link-speed)".into(),
        };
        format!(
            "{}: {:.3} KB in, {:.3} KB out per event{link}",
            n.device, n.rx_kb_per_o, n.tx_kb_per_o
        )
    };
    if let Some(h) = &r.server_host {
        let _ = writeln!(
            s,
            "\nServer host (host-level: every process of the machine; node_exporter {}, {} scrapes):",
            h.source, h.scrapes
        );
        let opt = |v: Option<f64>, digits: usize| {
            v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
        };
        if h.cpu_us_per_op.is_some() {
            let _ = writeln!(
                s,
                "    CPU per event:                       {} us (user {}%, system {}%, iowait {}% of {} CPUs)",
                opt(h.cpu_us_per_op, 1),
                opt(h.cpu_user_pct, 1),
                opt(h.cpu_system_pct, 1),
                opt(h.cpu_iowait_pct, 1),
                h.cpus.unwrap_or(0)
            );
        }
        if h.cs_per_o.is_some() {
            let _ = writeln!(
                s,
                "    context switches per event:          {}",
                opt(h.cs_per_o, 2)
            );
        }
        if let Some(d) = &h.device {
            let _ = writeln!(
                s,
                "    disk {d}: {} reads, {} writes, {} KB read, {} KB written per event; busy {}%",
                opt(h.r_per_o, 3),
                opt(h.w_per_o, 3),
                opt(h.rkb_per_o, 2),
                opt(h.wkb_per_o, 2),
                opt(h.device_busy_pct, 1)
            );
        }
        if let Some(n) = &h.net {
            let _ = writeln!(s, "    network {}", net_line(n));
        }
        if let Some(note) = &h.note {
            let _ = writeln!(s, "    note: {note}");
        }
    }
    if let Some(n) = r.hw.as_ref().and_then(|h| h.net.as_ref()) {
        let _ = writeln!(s, "\nClient network {}", net_line(n));
    }
}

pub fn summary(r: &Results) -> String {
    let mut s = String::new();
    sql_statistics(&mut s, r);
    general_statistics(&mut s, r);
    latency_summary(&mut s, r);
    if !r.statements.is_empty() {
        if crate::results::times_operations(&r.workload) {
            operations_summary(&mut s, r);
        } else {
            statements_summary(&mut s, &r.statements);
        }
    }
    network_summary(&mut s, r);
    if let Some(w) = r.waits.as_ref().filter(|w| w.samples > 0) {
        waits_summary(&mut s, r, w);
    }
    if let Some(p) = &r.profile {
        profile_summary(&mut s, p);
    }
    if let Some(w) = &r.waits
        && let (Some(n), Some(ms)) = (w.busy_waits, w.busy_ms)
    {
        let per_op = per_event(r, n);
        let _ = writeln!(
            s,
            "\nSQLite busy waits (statements that found the database locked): {n} ({per_op:.4} per event), {ms:.1} ms in all"
        );
    }
    if !r.phases.is_empty() {
        phases_summary(&mut s, &r.phases);
    }
    if let Some(t) = &r.tpcc {
        tpcc_summary(&mut s, t);
    }
    roles_summary(&mut s, r);
    if r.interrupted {
        let _ = writeln!(s, "\nInterrupted: the figures cover the run up to Ctrl-C.");
    }
    s
}

/// The groups of clients that ran beside the measured ones (every figure above is the
/// measured group's).
fn roles_summary(s: &mut String, r: &Results) {
    if r.roles.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nBeside it (groups of clients counted apart; the figures above are the measured group's):"
    );
    for g in &r.roles {
        let asked = match (g.rate, g.rate_met) {
            (Some(rate), Some(met)) => format!(
                " at {rate}/s: {:.1}/s ({})",
                g.tps,
                if met { "kept" } else { "NOT kept" }
            ),
            _ => format!(": {:.1}/s", g.tps),
        };
        let errors: u64 = g.errors.values().sum();
        let _ = writeln!(
            s,
            "    {} x{}{asked}, {} events, p99 {:.3} ms, {errors} retried{}",
            g.workload,
            g.clients,
            g.events,
            g.latency_ms.p99,
            g.error
                .as_deref()
                .map_or(String::new(), |e| format!("; stopped: {e}"))
        );
    }
}

/// The load, and sysbench's "SQL statistics": queries, transactions, errors, reconnects, rows.
fn sql_statistics(s: &mut String, r: &Results) {
    let per_s = |n: f64| if r.time_s > 0.0 { n / r.time_s } else { 0.0 };
    if let Some(p) = &r.prepare {
        let _ = writeln!(
            s,
            "Load:\n    tables x rows:                       {} rows in {} tables",
            p.rows, p.tables
        );
        let _ = writeln!(
            s,
            "    load time:                           {:.4}s ({:.0} rows/s)\n",
            p.seconds, p.rows_per_s
        );
    }
    let q = &r.queries;
    s.push_str(&super::shape::queries_performed(q));
    let _ = writeln!(
        s,
        "    {:<37}{:<8} ({:.2} per sec.)",
        "transactions:", r.events, r.tps
    );
    let _ = writeln!(
        s,
        "    {:<37}{:<8} ({:.2} per sec.)",
        "queries:", q.total, r.qps
    );
    let errors: u64 = r.errors.values().sum();
    let _ = writeln!(
        s,
        "    {:<37}{:<8} ({:.2} per sec.)",
        "ignored errors:",
        errors,
        per_s(errors as f64)
    );
    for (class, n) in r.errors.iter().filter(|(_, n)| **n > 0) {
        let _ = writeln!(s, "        {:<33}{n}", format!("{class}:"));
    }
    let _ = writeln!(
        s,
        "    {:<37}{:<8} ({:.2} per sec.)",
        "reconnects:",
        r.reconnects,
        per_s(r.reconnects as f64)
    );
    for (what, n) in [
        ("failed events (--max-tries):", r.failed_events),
        ("events retried:", r.retried_events),
        ("events over --latency-limit:", r.late_events),
        ("events skipped (--latency-limit):", r.skipped_events),
    ] {
        if n > 0 {
            let _ = writeln!(s, "    {what:<37}{n:<8} ({:.2} per sec.)", per_s(n as f64));
        }
    }
    if q.rows > 0 {
        let _ = writeln!(
            s,
            "    {:<37}{:<8} ({:.2} per sec.)",
            "rows read:", q.rows, r.rows_per_s
        );
    }
}

/// sysbench's "General statistics", the target rate and how the clients were served.
fn general_statistics(s: &mut String, r: &Results) {
    let _ = writeln!(s, "\nGeneral statistics:");
    let _ = writeln!(s, "    {:<37}{:.4}s", "total time:", r.time_s);
    let _ = writeln!(s, "    {:<37}{}", "total number of events:", r.events);
    if let Some(rate) = &r.rate {
        let _ = writeln!(
            s,
            "    {:<37}{:.2}/s (lag ms avg/max: {:.2}/{:.2})",
            "target rate:", rate.target_per_s, rate.lag_avg_ms, rate.lag_max_ms
        );
    }
    if let Some(sv) = &r.serving {
        let conns = match sv.connections {
            Some(m) => format!("sharing {m} connections"),
            None => "a connection each".to_string(),
        };
        let _ = writeln!(
            s,
            "    {:<37}{} on {} worker threads, {conns} (connected in {:.1}s)",
            "clients:", sv.clients, sv.workers, sv.connect_s
        );
        let q = &sv.queue_ms;
        let _ = writeln!(
            s,
            "    {:<37}avg {:.2}, p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2} (lower is better; part of the latency)",
            "queue time (ms):", q.avg, q.p50, q.p90, q.p99, q.max
        );
        let _ = writeln!(
            s,
            "    {:<37}{} of {}{}",
            "clients behind their schedule:",
            sv.clients_behind,
            sv.clients,
            if sv.clients_behind > 0 {
                " (a due event started later than its wait before it, at least 10 ms, at most 1 s: more workers or connections, or a server that keeps up)"
            } else {
                ""
            }
        );
    }
}

/// The latency's percentiles and the threads' fairness.
fn latency_summary(s: &mut String, r: &Results) {
    let l = &r.latency_ms;
    let _ = writeln!(s, "\nLatency (ms):");
    for (name, v) in [
        ("min", l.min),
        ("avg", l.avg),
        ("max", l.max),
        ("50th percentile", l.p50),
        ("90th percentile", l.p90),
        ("95th percentile", l.p95),
        ("99th percentile", l.p99),
        ("99.9th percentile", l.p999),
        ("sum", l.sum),
    ] {
        let _ = writeln!(s, "         {:<22}{v:>18.2}", format!("{name}:"));
    }
    let n = r.thread_events.len().max(1) as f64;
    let avg = r.thread_events.iter().sum::<u64>() as f64 / n;
    let sd = (r
        .thread_events
        .iter()
        .map(|&e| (e as f64 - avg).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    let _ = writeln!(
        s,
        "\nThreads fairness:\n    events (avg/stddev):           {avg:.4}/{sd:.2}"
    );
}

/// What the server's sessions waited for, InnoDB's row locks and semaphores, and
/// performance_schema's waits.
fn waits_summary(s: &mut String, r: &Results, w: &crate::results::diagnosis::WaitProfile) {
    let _ = writeln!(
        s,
        "\nWaits ({} samples of the server's sessions from {}, {} rounds):",
        w.samples, w.source, w.rounds
    );
    for e in w.events.iter().take(8) {
        let _ = writeln!(s, "    {:<36}{:>6.1}%", e.event, e.share * 100.0);
    }
    if let (Some(n), Some(ms)) = (w.row_lock_waits, w.row_lock_ms) {
        let per_op = per_event(r, n);
        let _ = writeln!(
            s,
            "    InnoDB row lock waits: {n} ({per_op:.3} per event), {ms} ms in all"
        );
    }
    if let Some(i) = &w.innodb {
        let mut parts = Vec::new();
        if let (Some(r), Some(sg)) = (i.reservations, i.signals) {
            parts.push(format!("OS wait array reservations {r}, signals {sg}"));
        }
        for (kind, n) in &i.rw_os_waits {
            parts.push(format!("RW-{kind} OS waits {n}"));
        }
        if i.long_waits_at_end > 0 {
            parts.push(format!(
                "{} thread(s) waiting long on a semaphore at the end",
                i.long_waits_at_end
            ));
        }
        for m in i.mutexes.iter().take(5) {
            parts.push(format!("{} os_waits {}", m.name, m.os_waits));
        }
        if !parts.is_empty() {
            let _ = writeln!(s, "    InnoDB semaphores: {}", parts.join("; "));
        }
    }
    if !w.instruments.is_empty() {
        let _ = writeln!(s, "    performance_schema waits (most time first):");
        for i in w.instruments.iter().take(5) {
            let _ = writeln!(
                s,
                "        {:<48}{:>10} waits {:>10.1} ms",
                i.event, i.count, i.ms
            );
        }
    }
}

/// The profile's top functions.
fn profile_summary(s: &mut String, p: &crate::results::diagnosis::Profile) {
    let _ = writeln!(
        s,
        "\nProfile of {} ({} samples at {} Hz, {} process(es)); top functions:\n    {:<48}{:>8}{:>8}",
        p.subject, p.samples, p.hz, p.processes, "function", "self %", "total %"
    );
    for f in p.functions.iter().take(12) {
        let _ = writeln!(
            s,
            "    {:<48}{:>8.1}{:>8.1}",
            f.function,
            f.self_share * 100.0,
            f.total_share * 100.0
        );
    }
}

/// `n` per event of the run (0 without events).
fn per_event(r: &Results, n: u64) -> f64 {
    if r.events > 0 {
        n as f64 / r.events as f64
    } else {
        0.0
    }
}

/// A line per statement kind of the event, as `pgbench -r` gives per command.
fn statements_summary(s: &mut String, statements: &[crate::results::StatementFigures]) {
    let _ = writeln!(
        s,
        "\nStatements (latency in ms, from the end of the statement before):\n    {:<18}{:>10}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "statement", "count", "/event", "avg", "p50", "p95", "p99", "max"
    );
    for x in statements {
        let l = &x.latency_ms;
        let _ = writeln!(
            s,
            "    {:<18}{:>10}{:>8.2}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>10.3}",
            x.name, x.count, x.per_event, l.avg, l.p50, l.p95, l.p99, l.max
        );
    }
}

/// A line per operation of a workload whose events are one operation each (LinkBench): its
/// rate, its share of the mix and its latency.
fn operations_summary(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "\nOperations (latency in ms, each operation's transaction whole):\n    {:<18}{:>10}{:>10}{:>9}{:>10}{:>10}{:>10}{:>10}",
        "operation", "count", "ops/s", "share %", "avg", "p50", "p99", "max"
    );
    for x in &r.statements {
        let l = &x.latency_ms;
        let _ = writeln!(
            s,
            "    {:<18}{:>10}{:>10.1}{:>9.2}{:>10.3}{:>10.3}{:>10.3}{:>10.3}",
            x.name,
            x.count,
            if r.time_s > 0.0 {
                x.count as f64 / r.time_s
            } else {
                0.0
            },
            100.0 * x.per_event,
            l.avg,
            l.p50,
            l.p99,
            l.max
        );
    }
}

/// TPC-C's section: NOPM, tpm, and a line per transaction type with its 90th-percentile limit.
fn tpcc_summary(s: &mut String, t: &crate::results::TpccFigures) {
    let _ = writeln!(
        s,
        "\nTPC-C ({} warehouse(s), unaudited):\n    {:<37}{:.0}\n    {:<37}{:.0}",
        t.warehouses, "NOPM (new orders per minute):", t.nopm, "tpm (all transactions):", t.tpm
    );
    if let Some(m) = t
        .mix
        .filter(|m| *m != crate::results::figures::TPCC_LEAST_MIX)
    {
        let _ = writeln!(
            s,
            "    {:<37}{} (--mix; the specification's least: 45,43,4,4,4){}",
            "mix (NO,P,OS,D,SL %):",
            m.map(|x| x.to_string()).join(","),
            if t.mix_below_minimums.is_empty() {
                String::new()
            } else {
                format!(", below its minimums: {}", t.mix_below_minimums.join(", "))
            }
        );
    }
    match t.nopm_ceiling_per_warehouse {
        Some(c) => {
            let _ = writeln!(
                s,
                "    {:<37}{:.2} of at most {c:.2} with these terminals' keying and think times ({:.0}%)",
                "NOPM per warehouse:",
                t.nopm_per_warehouse,
                if c > 0.0 {
                    t.nopm_per_warehouse * 100.0 / c
                } else {
                    0.0
                }
            );
            let _ = writeln!(
                s,
                "    {:<37}{}",
                "pacing:",
                if t.conforming {
                    "as specified (ten terminals per warehouse, keying and think times unscaled)"
                        .to_string()
                } else if !t.mix_below_minimums.is_empty() {
                    format!(
                        "NOT as specified (its mix gives {})",
                        t.mix_below_minimums.join(", ")
                    )
                } else {
                    format!(
                        "NOT as specified (keying and think times x {}, {} terminals per warehouse where the specification has 10)",
                        t.think_scale.unwrap_or(1.0),
                        t.terminals_per_warehouse
                    )
                }
            );
        }
        None => {
            let _ = writeln!(
                s,
                "    {:<37}{:.2} (no keying or think times: a throughput test, not the specification's pacing)",
                "NOPM per warehouse:", t.nopm_per_warehouse
            );
        }
    }
    let _ = writeln!(
        s,
        "    {:<13}{:>8}{:>7}{:>8}{:>6}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}  90th limit",
        "type", "count", "%", "retries", "rbk", "avg ms", "p50", "p90", "p95", "p99", "max"
    );
    for x in &t.transactions {
        let l = &x.latency_ms;
        let _ = writeln!(
            s,
            "    {:<13}{:>8}{:>7.1}{:>8}{:>6}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}  {:.0} s {}",
            x.name,
            x.count,
            x.share_pct,
            x.retries,
            x.rollbacks,
            l.avg,
            l.p50,
            l.p90,
            l.p95,
            l.p99,
            l.max,
            x.limit_p90_ms / 1000.0,
            if x.limit_met { "pass" } else { "FAIL" }
        );
    }
    if t.transactions.iter().any(|x| x.queue_ms.is_some()) {
        let _ = writeln!(
            s,
            "    queue time (ms) of the latency, waiting for a worker or a connection:\n    {:<13}{:>10}{:>10}{:>10}{:>10}",
            "type", "avg", "p90", "p99", "max"
        );
        for x in &t.transactions {
            if let Some(q) = &x.queue_ms {
                let _ = writeln!(
                    s,
                    "    {:<13}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
                    x.name, q.avg, q.p90, q.p99, q.max
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "    response-time limits: {}",
        if t.limits_met { "all met" } else { "NOT met" }
    );
}

/// `--phases`: a line per phase, its target beside what it did.
fn phases_summary(s: &mut String, phases: &[crate::results::figures::PhaseFigures]) {
    let _ = writeln!(
        s,
        "\nPhases (target, then measured; higher events/s, lower latency better):"
    );
    for (i, p) in phases.iter().enumerate() {
        let target = match (p.target_per_s, p.clients) {
            (Some(r), _) => format!("{r:.1}/s asked"),
            (None, Some(c)) => format!("{c} clients"),
            (None, None) => String::new(),
        };
        let _ = writeln!(
            s,
            "    {:>2}. {:<24} {:<16} {:>10.1} events/s  p95 {:>8.2} ms  p99 {:>8.2} ms  errors {}",
            i + 1,
            p.phase,
            target,
            p.tps,
            p.latency_ms.p95,
            p.latency_ms.p99,
            p.errors + p.failed
        );
    }
}
