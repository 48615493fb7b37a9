//! What `--help` shows of a run's options where a command reads only some of them: `tpcc run`
//! and `prepare`/`cleanup` (the options still parse; the help leaves them out).

/// `tpcc run --help`: TPC-C's own options first, then what every run shares under its
/// headings; the other workloads' options (the sysbench tables, ranges, statement mix and key
/// distributions, pgbench's, every other family's) are left out of the help, which they made
/// 150 lines long with --warehouses near the end. They still parse, and are refused as before
/// where TPC-C has no use for them.
pub(super) fn tpcc_run_help(a: clap::Arg) -> clap::Arg {
    let order = match a.get_id().as_str() {
        "warehouses" => 0,
        "wait" => 1,
        "think_scale" => 2,
        "mix" => 3,
        _ => match a.get_help_heading() {
            Some(h) if !super::run::heading::SHARED.contains(&h) => return a.hide(true),
            _ => return a,
        },
    };
    a.help_heading(None).display_order(order)
}

/// `prepare --help` and `cleanup --help`: what loading or dropping tables reads. A run's own
/// options (marked "run:") and the workloads' statement mix are left out of the help; they
/// still parse, as sysbench's commands take one option list for a whole cycle.
pub(super) fn prepare_help(a: clap::Arg) -> clap::Arg {
    const RUN_MIX: [&str; 32] = [
        "profile_hz",
        "rand_type",
        "rand_zipfian_exp",
        "rand_pareto_h",
        "rand_spec_pct",
        "rand_spec_res",
        "range_size",
        "skip_trx",
        "range_selects",
        "point_selects",
        "simple_ranges",
        "sum_ranges",
        "order_ranges",
        "distinct_ranges",
        "index_updates",
        "non_index_updates",
        "delete_inserts",
        "random_points",
        "hot_points",
        "covered",
        "on_id",
        "number_of_ranges",
        "delta",
        "pipeline",
        "statement_times",
        "scripts",
        "defines",
        "wait",
        "mix",
        "think_scale",
        "rows_per_commit",
        "small_test",
    ];
    let run_only = a
        .get_help()
        .is_some_and(|h| h.to_string().starts_with("run:"));
    if run_only || RUN_MIX.contains(&a.get_id().as_str()) {
        a.hide(true)
    } else {
        a
    }
}
