use super::cells::{Cell, Pause, StepKind, Sweep, TargetSpec};
use super::file::{Class, builtin};
use super::load::format_seconds;
use super::options::parse_size;
use crate::cli::{ClientList, SweepOverrides};
use crate::server::ServerKind;

fn err(text: &str) -> String {
    match Sweep::parse("p.toml", text, &SweepOverrides::default()) {
        Err(e) if e.exit_code() == 2 => e.to_string(),
        Err(e) => panic!("not a usage error: {e}"),
        Ok(_) => panic!("accepted: {text}"),
    }
}

const ONE_STEP: &str = "[[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n";

#[test]
fn builtin_plans_are_valid() {
    for (name, _) in builtin() {
        let s = Sweep::load(name, &SweepOverrides::default()).expect(name);
        assert!(!s.steps.is_empty());
        assert_eq!(s.file.name, name);
    }
    let small = Sweep::load("small", &SweepOverrides::default()).unwrap();
    // docs/workloads.md section 4: the suite starts with the load and ends with insert.
    assert_eq!(small.steps.first().unwrap().name, "load");
    assert_eq!(small.steps.last().unwrap().name, "insert");
    let pauses = small
        .steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Pause(Pause::Postwrite)))
        .count();
    assert_eq!(pauses, 2);
}

#[test]
/// (or run their fixed events whole: class once)
fn builtin_steps_that_write_run_the_write_time() {
    for (name, _) in builtin() {
        let s = Sweep::load(name, &SweepOverrides::default()).unwrap();
        for step in &s.steps {
            if let StepKind::Run {
                workload, class, ..
            } = &step.kind
            {
                let writes = ["write", "update", "insert", "delete"]
                    .iter()
                    .any(|w| workload.contains(w) && !workload.contains("read_write"));
                if writes {
                    assert!(
                        matches!(class, Class::Write | Class::Once),
                        "{name}: step {} ({workload}) is class {class:?}",
                        step.name
                    );
                }
            }
        }
    }
}

#[test]
fn errors_name_the_line() {
    let text =
        format!("clients = [1]\n\n{ONE_STEP}\n[[steps]]\nworkload = \"nope\"\nclass = \"read\"\n");
    let e = err(&text);
    assert!(e.starts_with("p.toml:7:"), "{e}");
    assert!(e.contains("nope"), "{e}");

    let e = err(&format!("{ONE_STEP}options = {{ range_size = 0 }}\n"));
    assert!(
        e.starts_with("p.toml:1:") && e.contains("range-size"),
        "{e}"
    );

    let e = err(&format!("{ONE_STEP}options = {{ threads = 4 }}\n"));
    assert!(e.contains("the sweep sets it"), "{e}");

    let e = err(&format!("{ONE_STEP}options = {{ no_such_option = 4 }}\n"));
    assert!(
        e.contains("option no_such_option: dbsweep run has no such option"),
        "{e}"
    );

    let e = err(&format!("name = \"x\"\nclients = [0]\n{ONE_STEP}"));
    assert!(e.starts_with("p.toml:2: clients"), "{e}");

    // A TOML syntax error, and an unknown key, name their line.
    let e = err(&format!("{ONE_STEP}class = \"read\"\n"));
    assert!(e.starts_with("p.toml:"), "{e}");
    let e = err(&format!("tabels = 3\n{ONE_STEP}"));
    assert!(e.starts_with("p.toml:1:") && e.contains("tabels"), "{e}");

    let e = err("[[steps]]\nworkload = \"oltp_point_select\"\n");
    assert!(e.contains("class"), "{e}");
    let e = err("[[steps]]\nload = true\npause = 3\n");
    assert!(e.contains("exactly one"), "{e}");
    let e = err("steps = []\n");
    assert!(e.contains("at least one"), "{e}");
}

#[test]
fn targets_and_configs_are_checked() {
    let e = err(&format!(
        "[[targets]]\nurl = \"postgres://u@h/db\"\n[configs.big]\nsettings = {{ shared_buffers = \"1GB\" }}\n{ONE_STEP}"
    ));
    assert!(
        e.starts_with("p.toml:3:") && e.contains("managed server"),
        "{e}"
    );
    let e = err(&format!("[[targets]]\nurl = \"oracle://x\"\n{ONE_STEP}"));
    assert!(e.starts_with("p.toml:1:"), "{e}");
    let e = err(&format!("[[targets]]\nname = \"a\"\n{ONE_STEP}"));
    assert!(e.contains("exactly one of url"), "{e}");
    let e = err(&format!(
        "[[targets]]\nserver = \"postgres\"\n[configs.x]\nmemory_limit = \"lots\"\n{ONE_STEP}"
    ));
    assert!(e.contains("memory_limit"), "{e}");
    let s = Sweep::parse(
        "p",
        &format!(
            "clients = [1, 4]\n[[targets]]\nserver = \"mariadb\"\n[configs.a]\nsettings = {{ innodb_buffer_pool_size = \"64M\" }}\nmemory_limit = \"1G\"\n[configs.b]\n{ONE_STEP}"
        ),
        &SweepOverrides::default(),
    )
    .unwrap();
    // One client count at a time, every configuration once at each (interleaved).
    let ids: Vec<String> = s.cells().iter().map(Cell::id).collect();
    assert_eq!(
        ids,
        [
            "mariadb.a.c1",
            "mariadb.b.c1",
            "mariadb.a.c4",
            "mariadb.b.c4"
        ]
    );
    assert_eq!(s.configs[0].memory_limit, Some(1 << 30));
}

#[test]
fn an_option_from_the_command_line_replaces_the_plans_and_gives_way_to_a_steps() {
    let o = SweepOverrides {
        option: vec![
            ("range-size".into(), "11".into()),
            ("skip_trx".into(), "on".into()),
        ],
        ..SweepOverrides::default()
    };
    let text = format!("options = {{ range_size = 7 }}\n{ONE_STEP}");
    let s = Sweep::parse("p", &text, &o).unwrap();
    let plan = s.step_plan(&s.steps[0], 1, "sqlite://x.db").unwrap();
    assert_eq!(plan.workload_opts.families.sysbench.range_size, 11);
    assert!(plan.workload_opts.families.sysbench.skip_trx);
    let text = format!("{ONE_STEP}options = {{ range-size = 9 }}\n");
    let s = Sweep::parse("p", &text, &o).unwrap();
    let plan = s.step_plan(&s.steps[0], 1, "sqlite://x.db").unwrap();
    assert_eq!(plan.workload_opts.families.sysbench.range_size, 9);
    // One the sweep sets itself is refused as in a plan.
    let o = SweepOverrides {
        option: vec![("threads".into(), "4".into())],
        ..SweepOverrides::default()
    };
    let e = Sweep::parse("p", ONE_STEP, &o).map(|_| ()).unwrap_err();
    assert!(e.to_string().contains("an option the sweep sets"), "{e}");
}

#[test]
fn overrides_and_step_options_resolve() {
    let o = SweepOverrides {
        server: vec!["postgres".parse().unwrap()],
        clients: Some(ClientList(vec![2])),
        read_time: Some(3.0),
        table_size: Some(500),
        ..SweepOverrides::default()
    };
    let text = format!(
        "options = {{ range_size = 7, skip_trx = true }}\n{ONE_STEP}options = {{ range-size = 9 }}\n"
    );
    let s = Sweep::parse("p", &text, &o).unwrap();
    assert_eq!(s.targets[0].spec, TargetSpec::Managed(ServerKind::Postgres));
    let plan = s.step_plan(&s.steps[0], 2, "sqlite://x.db").unwrap();
    assert_eq!(plan.runner.threads, 2);
    assert_eq!(plan.runner.time, Some(3.0));
    assert_eq!(plan.workload_opts.table_size, 500);
    assert_eq!(plan.workload_opts.families.sysbench.range_size, 9);
    assert!(plan.workload_opts.families.sysbench.skip_trx);
    assert_eq!(plan.target, "sqlite://x.db");
    // The resolved plan saves and reads back the same.
    let saved = toml::to_string(&s.file).unwrap();
    let again = Sweep::parse("plan.toml", &saved, &SweepOverrides::default()).unwrap();
    assert_eq!(again.file.read_time, 3.0);
    assert_eq!(again.targets[0].spec, s.targets[0].spec);
    assert_eq!(again.steps.len(), s.steps.len());
}

#[test]
fn sizes_and_durations_format() {
    assert_eq!(parse_size("512M"), Some(512 << 20));
    assert_eq!(parse_size("2g"), Some(2 << 30));
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("x"), None);
    assert_eq!(format_seconds(59.6), "1m00s");
    assert_eq!(format_seconds(3725.0), "1h02m05s");
}

#[test]
fn plan_errors_are_typed_with_their_file_and_line() {
    let e = Sweep::parse(
        "p.toml",
        &format!("name = \"x\"\nclients = [0]\n{ONE_STEP}"),
        &SweepOverrides::default(),
    )
    .unwrap_err();
    match e {
        crate::error::Error::Plan { file, line, why } => {
            assert_eq!((file.as_str(), line), ("p.toml", 2));
            assert!(why.starts_with("clients:"), "{why}");
        }
        other => panic!("not a plan error: {other:?}"),
    }
    // An option the run refuses, inside a step, keeps the step's line.
    let e = err(&format!("{ONE_STEP}options = {{ range_size = 0 }}\n"));
    assert!(
        e.starts_with("p.toml:1: step oltp_point_select: --range-size:"),
        "{e}"
    );
}

#[test]
fn option_errors_are_typed_with_the_option() {
    let (words, _) = crate::cli::RunWords::read(["--tables=0".to_string()]).expect("words");
    match crate::plan::RunPlan::from_args("oltp_point_select", &words.args) {
        Err(crate::error::Error::Option { option, why }) => {
            assert_eq!(option, "tables");
            assert!(why.contains("at least 1"), "{why}");
        }
        other => panic!("not an option error: {other:?}"),
    }
}

#[test]
fn pipelining_is_postgresqls_and_said_so_once() {
    use crate::db::Dialect;
    use crate::plan::check_pipeline;
    assert!(check_pipeline(true, Some(Dialect::Postgres)).is_ok());
    for other in [Some(Dialect::Mysql), Some(Dialect::Sqlite), None] {
        assert_eq!(
            check_pipeline(true, other),
            Err("only PostgreSQL targets pipeline statements")
        );
        assert!(check_pipeline(false, other).is_ok());
    }
    // A managed MariaDB refuses it before it starts: measure/open.rs's tests.
}

#[test]
fn tpccs_options_reach_only_tpcc_steps_in_either_spelling() {
    use super::options::takes;
    for o in ["think_scale", "think-scale", "warehouses", "wait", "mix"] {
        assert!(!takes("oltp_read_only", o), "{o} reached an sbtest step");
        assert!(takes("tpcc", o), "{o} did not reach TPC-C");
    }
    assert!(!takes("tpcc", "point_selects"));
    assert!(takes("oltp_read_only", "point_selects"));
}
