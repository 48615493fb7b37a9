//! The autopsy of a change along a series: before and after it, side by side, every figure per
//! operation the runs have, the waits and the functions on CPU that moved, and the builds'
//! versions and settings that differ (a default that changed is a likely cause).

use super::absolute::HW_METRICS;
use super::model::{Dataset, Entry};
use super::stats::{median_of, ratio_of};
use super::tables::{Cell, Row, Table};

/// The events of a side, most first: each run's list from `of` (`event -> weight`) summed over
/// the side's runs and divided by the sum of all weights (`Whole`: the lists are complete
/// counts), or by the runs (`Mean`: each list holds shares of its own run, its top only); empty
/// when no run has the list.
fn pooled(
    side: &[&Entry],
    of: impl Fn(&crate::results::Results) -> Option<Vec<(String, f64)>>,
    by: Pool,
) -> Vec<(String, f64)> {
    let mut sum: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    let mut runs = 0usize;
    for list in side.iter().filter_map(|e| of(e.results.as_ref()?)) {
        runs += 1;
        for (event, w) in list {
            *sum.entry(event).or_default() += w;
        }
    }
    let total: f64 = match by {
        Pool::Whole => sum.values().sum(),
        Pool::Mean => runs as f64,
    };
    if total <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<(String, f64)> = sum.into_iter().map(|(k, v)| (k, v / total)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[derive(Clone, Copy)]
enum Pool {
    Whole,
    Mean,
}

/// Events shown per side in an autopsy's waits and functions.
const AUTOPSY_TOP: usize = 5;

/// The rows of the events among either side's top [`AUTOPSY_TOP`]: their shares before and
/// after in percent, and the move in points (the largest moves first).
fn shares_moved(what: &str, before: &[(String, f64)], after: &[(String, f64)]) -> Vec<Row> {
    if before.is_empty() || after.is_empty() {
        return Vec::new();
    }
    let share = |side: &[(String, f64)], k: &str| {
        side.iter().find(|(e, _)| e == k).map_or(0.0, |(_, s)| *s)
    };
    let mut keys: Vec<&str> = before
        .iter()
        .take(AUTOPSY_TOP)
        .chain(after.iter().take(AUTOPSY_TOP))
        .map(|(k, _)| k.as_str())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut moved: Vec<(&str, f64, f64)> = keys
        .into_iter()
        .map(|k| (k, share(before, k), share(after, k)))
        .collect();
    moved.sort_by(|a, b| {
        (b.2 - b.1)
            .abs()
            .total_cmp(&(a.2 - a.1).abs())
            .then_with(|| a.0.cmp(b.0))
    });
    moved
        .into_iter()
        .map(|(k, b, a)| Row {
            group: None,
            label: format!("{what}: {k} (% of samples)"),
            summary: false,
            cells: vec![
                Cell::Num(b * 100.0),
                Cell::Num(a * 100.0),
                Cell::Text(format!("{:+.1} pts", (a - b) * 100.0)),
            ],
        })
        .collect()
}

/// Whether setting `k` is one every server instance has its own of (its port, socket, data
/// and file paths), which differ between any two runs and explain nothing.
fn per_instance(
    k: &str,
    b: &std::collections::BTreeMap<String, String>,
    a: &std::collections::BTreeMap<String, String>,
) -> bool {
    const OWN: [&str; 4] = ["port", "socket", "unix_socket_directories", "server_id"];
    let path = |m: &std::collections::BTreeMap<String, String>| {
        m.get(k).is_some_and(|v| v.starts_with('/'))
    };
    OWN.contains(&k) || (path(b) && path(a))
}

/// The seconds of its resource a figure of `id` of value `v` per operation costs in run `e`:
/// CPU microseconds are a core's time; IO and network figures are the device's time at the
/// machine's ceiling where the sweep measured its limits (reads over the disk's best random
/// read rate, KB over its sequential bandwidth, KB over the connection's), else the device's
/// or the link's busy time per operation, shared by every figure of it. None for figures that
/// are no resource's time (context switches, which are in the CPU's).
fn seconds_per_op(id: &str, v: f64, e: &Entry) -> Option<f64> {
    use crate::limits::Kind;
    let r = e.results.as_ref()?;
    let limits = r.limits.as_deref();
    let best = |k: Kind| limits.and_then(|l| l.best(k)).filter(|f| f.iops > 0.0);
    let device_busy = || {
        let busy = r.hw.as_ref()?.device_busy_pct?;
        (r.tps > 0.0).then(|| busy / 100.0 / r.tps)
    };
    let by_mb = |k: Kind, bytes: f64| {
        best(k)
            .filter(|f| f.mb_s > 0.0)
            .map(|f| bytes / (f.mb_s * 1e6))
            .or_else(device_busy)
    };
    match id {
        "cpu_us_per_op.client"
        | "cpu_us_per_op.server"
        | "cpu_us_per_op.machine"
        | "server_host.cpu_us_per_op" => Some(v / 1e6),
        "r_per_o" | "server.pages_read_per_op" => best(Kind::RandomRead)
            .map(|f| v / f.iops)
            .or_else(device_busy),
        "server.pages_written_per_op" => best(Kind::RandomWrite)
            .map(|f| v / f.iops)
            .or_else(device_busy),
        "rkb_per_o" | "server_host.rkb_per_o" => by_mb(Kind::SequentialRead, v * 1024.0),
        "wkb_per_o" | "server_host.wkb_per_o" => by_mb(Kind::SequentialWrite, v * 1024.0),
        "server.log_bytes_per_op" => by_mb(Kind::SequentialWrite, v),
        "net.rx_kb_per_o" | "net.tx_kb_per_o" | "server_host.net_kb_per_o" => {
            match limits
                .and_then(|l| l.network.as_ref())
                .filter(|n| n.result_mb_s > 0.0)
            {
                Some(n) => Some(v * 1024.0 / (n.result_mb_s * 1e6)),
                None => r.hw.as_ref()?.net.as_ref()?.demand_s(r.tps),
            }
        }
        _ => None,
    }
}

/// How much of a resource's time a figure must move (its cost per operation's change times
/// the throughput: a share of one core or one device) to count as explaining a change.
const EXPLAINS: f64 = 0.05;

/// The autopsy's largest moves as ` [moved most: machine CPU us/op 0.55x, IO:WALSync -65.8
/// pts]`: the two figures per operation whose change moved most of their resource's time
/// (beyond [`EXPLAINS`]: a figure near zero on both sides explains nothing, whatever its
/// ratio), and the wait that moved most (beyond 5 points); empty when nothing moved that much.
fn largest_moves(t: &Table, moved: &[(String, f64, f64)]) -> String {
    let short = |label: &str| label.split(" (").next().unwrap_or(label).to_string();
    let mut out: Vec<String> = moved
        .iter()
        .filter(|(_, share, _)| *share >= EXPLAINS)
        .take(2)
        .map(|(l, _, x)| format!("{} {x:.2}x", short(l)))
        .collect();
    // The waits' rows come largest move first.
    if let Some((label, pts)) = t.rows.iter().find_map(|r| {
        let event = r.label.strip_prefix("waits: ")?;
        let Some(Cell::Text(pts)) = r.cells.get(2) else {
            return None;
        };
        let moved: f64 = pts.trim_end_matches(" pts").parse().ok()?;
        (moved.abs() > 5.0).then(|| (short(event), pts.clone()))
    }) {
        out.push(format!("{label} {pts}"));
    }
    if out.is_empty() {
        String::new()
    } else {
        format!(" [moved most: {}]", out.join(", "))
    }
}

/// An autopsy's table, and its largest moves for the change's line.
pub(super) struct Autopsy {
    pub(super) table: Table,
    pub(super) moves: String,
}

/// The autopsy of a change of `test` between columns `at - 1` and `at` (the runs of columns
/// `from..at` before it, `at..to` after it): throughput and every figure per operation the runs
/// have, the median of each side and their ratio, and the servers' settings and versions that
/// differ between the builds on either side of it.
pub(super) fn autopsy(
    ds: &Dataset,
    slice: &super::tables::Slice,
    test: &str,
    (from, at, to): (usize, usize, usize),
    suffix: &str,
) -> Autopsy {
    let label = |c: usize| slice.columns[c].0.as_str();
    let (before, after) = (
        side(ds, slice, test, from..at),
        side(ds, slice, test, at..to),
    );
    let mut rows = Vec::new();
    let metrics = std::iter::once((
        "throughput",
        "throughput",
        Entry::throughput as fn(&Entry) -> Option<f64>,
    ))
    .chain(HW_METRICS.iter().map(|(id, title, f)| (*id, *title, *f)));
    // Events a second, the higher side's: what turns a cost per operation into a share of its
    // resource's time.
    let tps = |side: &[&Entry]| {
        let t: Vec<f64> = side
            .iter()
            .filter_map(|e| e.results.as_ref().map(|r| r.tps))
            .collect();
        median_of(&t).unwrap_or(0.0)
    };
    let x = tps(&before).max(tps(&after));
    let mut moved: Vec<(String, f64, f64)> = Vec::new();
    for (id, title, f) in metrics {
        let (b, a): (Vec<f64>, Vec<f64>) = (
            before.iter().filter_map(|e| f(e)).collect(),
            after.iter().filter_map(|e| f(e)).collect(),
        );
        let (Some(mb), Some(ma)) = (median_of(&b), median_of(&a)) else {
            continue;
        };
        let cost = |side: &[&Entry]| {
            let c: Vec<f64> = side
                .iter()
                .filter_map(|e| seconds_per_op(id, f(e)?, e))
                .collect();
            median_of(&c)
        };
        if let (Some(cb), Some(ca)) = (cost(&before), cost(&after)) {
            moved.push((title.to_string(), (ca - cb).abs() * x, ratio_of(ma, mb)));
        }
        rows.push(Row {
            group: None,
            label: title.to_string(),
            summary: false,
            cells: vec![Cell::Num(mb), Cell::Num(ma), Cell::Ratio(ratio_of(ma, mb))],
        });
    }
    let waits = |r: &crate::results::Results| -> Option<Vec<(String, f64)>> {
        let w = r.waits.as_ref()?;
        Some(
            w.events
                .iter()
                .map(|e| (e.event.clone(), e.samples as f64))
                .collect(),
        )
    };
    rows.extend(shares_moved(
        "waits",
        &pooled(&before, waits, Pool::Whole),
        &pooled(&after, waits, Pool::Whole),
    ));
    // Functions by their self share of the CPU profile's samples (each run weighs the same).
    let functions = |r: &crate::results::Results| -> Option<Vec<(String, f64)>> {
        let p = r.profile.as_ref()?;
        Some(
            p.functions
                .iter()
                .map(|f| (f.function.clone(), f.self_share))
                .collect(),
        )
    };
    rows.extend(shares_moved(
        "on CPU",
        &pooled(&before, functions, Pool::Mean),
        &pooled(&after, functions, Pool::Mean),
    ));
    // The builds on either side: their versions and the settings that differ.
    let last = before
        .iter()
        .rev()
        .find(|e| e.place == slice.columns[at - 1].1[0])
        .and_then(|e| e.results.as_ref());
    let first = after
        .iter()
        .find(|e| e.place == slice.columns[at].1[0])
        .and_then(|e| e.results.as_ref());
    let mut notes = vec![format!(
        "before: {} (columns {} to {}); after: {} (columns {} to {}); medians of their runs",
        label(at - 1),
        label(from),
        label(at - 1),
        label(at),
        label(at),
        label(to - 1)
    )];
    if let (Some(b), Some(a)) = (last, first) {
        notes.extend(builds_differ(b, a));
    }
    moved.sort_by(|a, b| b.1.total_cmp(&a.1));
    notes.push(format!(
        "moved most (the change's line): the figures whose change moved most of their resource's time, cost per operation times the throughput, at least {:.0}% of a core or a device; each IO and network figure's cost at the machine's ceiling where the sweep measured its limits, else its device's busy time per operation",
        EXPLAINS * 100.0
    ));
    let table = Table {
        id: "changes.autopsy".into(),
        title: format!(
            "The autopsy of {test}{suffix}: {} -> {}, before and after (per operation; which way is better is the figure's own)",
            label(at - 1),
            label(at)
        ),
        better: None,
        columns: vec!["before".into(), "after".into(), "after/before".into()],
        under: Vec::new(),
        rows,
        notes,
    };
    let moves = largest_moves(&table, &moved);
    Autopsy { table, moves }
}

/// What differs between the builds on either side of a change: their versions, and the
/// settings read at start (each instance's own port, socket and paths left out).
fn builds_differ(b: &crate::results::Results, a: &crate::results::Results) -> Vec<String> {
    let mut notes = Vec::new();
    if b.target.version != a.target.version {
        notes.push(format!(
            "versions: {} -> {}",
            b.target.version, a.target.version
        ));
    }
    let keys: std::collections::BTreeSet<&String> = b
        .target
        .settings
        .keys()
        .chain(a.target.settings.keys())
        .collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| b.target.settings.get(*k) != a.target.settings.get(*k))
        .filter(|k| !per_instance(k, &b.target.settings, &a.target.settings))
        .map(|k| {
            let v = |m: &std::collections::BTreeMap<String, String>| {
                m.get(k).cloned().unwrap_or_else(|| "-".into())
            };
            format!(
                "{k}: {} -> {}",
                v(&b.target.settings),
                v(&a.target.settings)
            )
        })
        .collect();
    notes.push(if differ.is_empty() {
        "the servers' settings read at start are the same on both sides".into()
    } else {
        format!(
            "settings that differ (a changed default is a likely cause): {}",
            differ.join("; ")
        )
    });
    notes
}

/// The entries of `test` in columns `cols` of `slice`.
pub(super) fn side<'a>(
    ds: &'a Dataset,
    slice: &super::tables::Slice,
    test: &str,
    cols: std::ops::Range<usize>,
) -> Vec<&'a Entry> {
    let places: Vec<super::model::Place> = slice.columns[cols]
        .iter()
        .flat_map(|(_, places)| places.iter().cloned())
        .collect();
    ds.at(&places).filter(|e| e.test == test).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's run at `tps` events a second, `cpu_us` of CPU and `wkb` KB written an
    /// event, its device busy half a percent of the step.
    fn run(dir: &std::path::Path, name: &str, tps: f64, cpu_us: f64, wkb: f64) {
        let mut r: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/report/cmp-a.json")).unwrap();
        r["tps"] = tps.into();
        r["qps"] = tps.into();
        r["hw"]["cpu_us_per_op"]["client"] = cpu_us.into();
        r["hw"]["cpu_us_per_op"]["machine"] = cpu_us.into();
        r["hw"]["wkb_per_o"] = wkb.into();
        r["hw"]["device_busy_pct"] = 0.5.into();
        std::fs::write(dir.join(format!("{name}.json")), r.to_string()).unwrap();
    }

    #[test]
    fn moved_most_is_what_moved_its_resources_time_not_a_ratio_of_near_zero_figures() {
        // A read-only step 1.8x faster with 0.55x the CPU an event; the KB it writes (next to
        // nothing on either side) fell to a hundredth: that explains nothing.
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), "a", 1000.0, 100.0, 0.002);
        run(dir.path(), "b", 1800.0, 55.0, 0.00002);
        let inputs = [dir.path().join("a.json"), dir.path().join("b.json")];
        let ds = Dataset::read(&inputs, crate::workload::families::throughput).unwrap();
        let slice = &super::super::tables::layout(&ds)[0];
        let a = autopsy(&ds, slice, "oltp_point_select", (0, 1, 2), "");
        assert!(a.moves.contains("CPU us/op 0.55x"), "{}", a.moves);
        assert!(!a.moves.contains("wKB/o"), "{}", a.moves);
        // The table itself still has the ratio, for whoever reads it.
        let wkb = a
            .table
            .rows
            .iter()
            .find(|r| r.label.starts_with("wKB/o"))
            .unwrap();
        assert!(matches!(wkb.cells[2], Cell::Ratio(x) if (x - 0.01).abs() < 1e-9));
    }
}
