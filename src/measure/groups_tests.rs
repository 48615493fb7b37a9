//! Groups of clients side by side (a run and its roles), each from its own plan: each runs
//! and counts its own events, a background ends with the measured group, and a group that
//! cannot start fails the step at once.

use std::sync::atomic::AtomicBool;

use crate::plan::RunPlan;
use crate::runner::{Group, run_groups};
use crate::workload::Workload;

fn plan(workload: &str, args: &[&str]) -> RunPlan {
    let words = ["--target", "mock://?service_us=500"]
        .iter()
        .chain(args)
        .map(|s| s.to_string());
    let (words, _) = crate::cli::RunWords::read(words).expect("options");
    RunPlan::from_args(workload, &words.args).expect("plan")
}

fn build(p: &RunPlan) -> Box<dyn Workload> {
    crate::workload::build(&p.workload, &p.workload_opts).expect("workload")
}

#[test]
fn each_group_runs_its_own_events_and_counts_them_apart() {
    let target = crate::db::open("mock://?service_us=500", Default::default()).unwrap();
    let reads = plan(
        "oltp_point_select",
        &["--events", "300", "--time", "0", "--threads", "2"],
    );
    let writes = plan("oltp_update_index", &["--events", "200", "--time", "0"]);
    let (wr, ww) = (build(&reads), build(&writes));
    let groups = [
        Group {
            workload: wr.as_ref(),
            opts: &reads.runner,
            measured: true,
        },
        Group {
            workload: ww.as_ref(),
            opts: &writes.runner,
            measured: true,
        },
    ];
    let out = run_groups(
        target.as_ref(),
        &groups,
        &AtomicBool::new(false),
        &mut |_| {},
    );
    let [Ok(r), Ok(w)] = out.as_slice() else {
        panic!("a group failed")
    };
    assert_eq!(r.total.counters.events, 300);
    assert_eq!(w.total.counters.events, 200);
    // Each group's figures hold its own statements only.
    assert_eq!(r.total.counters.queries.writes, 0);
    assert_eq!(w.total.counters.queries.reads, 0);
    assert_eq!(w.total.counters.queries.writes, 200);
}

#[test]
fn the_background_stops_when_the_measured_group_is_done() {
    let target = crate::db::open("mock://?service_us=500", Default::default()).unwrap();
    let measured = plan("oltp_point_select", &["--events", "200", "--time", "0"]);
    // Paced, and with no end of its own but the measured group's.
    let background = plan("oltp_insert", &["--rate", "100", "--time", "0"]);
    let (wm, wb) = (build(&measured), build(&background));
    let groups = [
        Group {
            workload: wm.as_ref(),
            opts: &measured.runner,
            measured: true,
        },
        Group {
            workload: wb.as_ref(),
            opts: &background.runner,
            measured: false,
        },
    ];
    let out = run_groups(
        target.as_ref(),
        &groups,
        &AtomicBool::new(false),
        &mut |_| {},
    );
    let [Ok(m), Ok(b)] = out.as_slice() else {
        panic!("a group failed")
    };
    assert_eq!(m.total.counters.events, 200);
    assert!(!m.interrupted && !b.interrupted);
    // It ran beside the measured group, at its rate, and ended with it.
    assert!(b.total.counters.events > 0, "the background ran no event");
    assert!(
        b.seconds < m.seconds + 1.0,
        "{} s beside {} s",
        b.seconds,
        m.seconds
    );
}

#[test]
fn a_group_that_cannot_start_fails_the_step_without_a_wait() {
    let target = crate::db::open("mock://", Default::default()).unwrap();
    let good = plan("oltp_point_select", &["--time", "600"]);
    // bulk_insert keeps a transaction open across events: the runner refuses to share
    // connections among its clients (the plan refuses it first; set here past the plan).
    let mut bad = plan("bulk_insert", &["--threads", "4", "--time", "600"]);
    bad.runner.connections = std::num::NonZeroU32::new(2);
    let (wg, wb) = (build(&good), build(&bad));
    let groups = [
        Group {
            workload: wg.as_ref(),
            opts: &good.runner,
            measured: true,
        },
        Group {
            workload: wb.as_ref(),
            opts: &bad.runner,
            measured: false,
        },
    ];
    let out = run_groups(
        target.as_ref(),
        &groups,
        &AtomicBool::new(false),
        &mut |_| {},
    );
    let e = out[1]
        .as_ref()
        .err()
        .expect("bulk_insert on shared connections")
        .to_string();
    assert!(e.contains("--connections"), "{e}");
    let e = out[0]
        .as_ref()
        .err()
        .expect("the group beside it does not run")
        .to_string();
    assert!(e.contains("beside these could not start"), "{e}");
}
