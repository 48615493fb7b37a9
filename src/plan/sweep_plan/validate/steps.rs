//! The plan's steps: what each does (a workload, a load or a pause), its name, a crash, and
//! its `dbsweep run` line checked at every client count.

use toml::Spanned;

use super::super::StepOptions;
use super::super::cells::{Pause, Source, Step, StepKind, Sweep, TargetSpec};
use super::super::file::{Class, LoadDef, PlanFile, RoleDef, SYSBENCH_LOAD, StepDef};
use super::super::options::{check_options, merge_options, takes};
use super::{MAX_STEP_NAME, check_name_length, is_label};
use crate::error::Error;

type Span = std::ops::Range<usize>;

/// Every step, in order, onto `sweep` (whose targets and configurations are checked).
pub(super) fn steps(src: &Source, sweep: &mut Sweep) -> Result<(), Error> {
    if sweep.file.steps.is_empty() {
        return Err(src.key_error("steps", "a plan needs at least one [[steps]]"));
    }
    for s in &sweep.file.steps.clone() {
        let step = step(src, s, sweep)?;
        sweep.steps.push(step);
    }
    Ok(())
}

/// One step, checked against the steps before it in `sweep`.
fn step(src: &Source, s: &Spanned<StepDef>, sweep: &Sweep) -> Result<Step, Error> {
    let span = s.span();
    let (def, roles) = with_roles(src, span.clone(), s.get_ref())?;
    let def = &def;
    let beside = roles.clients.is_some() || roles.rate.is_some() || !roles.roles.is_empty();
    if beside && !sweep.file.client_hosts.is_empty() {
        return Err(src.error(
            span,
            "roles do not go with client_hosts: the groups beside the measured one run on this host",
        ));
    }
    let kinds = usize::from(def.workload.is_some())
        + usize::from(def.load.is_some() && def.load != Some(LoadDef::Sysbench(false)))
        + usize::from(def.pause.is_some());
    if kinds != 1 {
        return Err(src.error(
            span,
            "a step needs exactly one of workload = \"...\", load = true (or load = \"tpcc\") or pause = \"postwrite\" | SECONDS",
        ));
    }
    check_options(src, span.clone(), &def.options)?;
    let step_workload = match (&def.workload, &def.load) {
        (Some(w), _) => w.as_str(),
        (None, Some(LoadDef::Workload(w))) => w.as_str(),
        _ => SYSBENCH_LOAD,
    };
    if let Some(k) = def.options.keys().find(|k| !takes(step_workload, k)) {
        return Err(src.error(
            span,
            format!(
                "option {k}: {} does not take it (it is {})",
                if step_workload == "tpcc" {
                    "TPC-C"
                } else {
                    "this workload"
                },
                if step_workload == "tpcc" {
                    "the sbtest workloads'"
                } else {
                    "TPC-C's"
                }
            ),
        ));
    }
    let mut kind = step_kind(src, span.clone(), def, &sweep.file)?;
    if let StepKind::Run { options, .. } = &mut kind {
        options.clients = roles.clients;
        options.rate = roles.rate;
        options.roles = roles.roles;
    }
    let name = def.name.clone().unwrap_or_else(|| match &kind {
        StepKind::Run { workload, .. } => workload.clone(),
        StepKind::Load(..) => "load".into(),
        StepKind::Pause(_) => "pause".into(),
    });
    if !is_label(&name.replace('.', "")) {
        return Err(src.error(
            span,
            format!("step name {name:?}: use letters, digits, ., - and _ only"),
        ));
    }
    check_name_length(src, &span, "step", &name, MAX_STEP_NAME)?;
    // Reports tell measured steps apart by name; pauses, loads and warm-ups may repeat.
    let measured =
        |k: &StepKind| matches!(k, StepKind::Run { class, .. } if !matches!(class, Class::Warmup));
    if measured(&kind)
        && sweep
            .steps
            .iter()
            .any(|s| s.name == name && measured(&s.kind))
    {
        return Err(src.error(
            span,
            format!(
                "two measured steps are called {name}: give each a name of its own \
                 (name = \"...\"); reports tell steps apart by name"
            ),
        ));
    }
    let crash = crash(src, span.clone(), def, &kind, sweep)?;
    if !sweep.file.client_hosts.is_empty() {
        if crash.is_some() {
            return Err(src.error(
                span,
                "crash = true does not go with client_hosts: the crash needs the managed server, on this host",
            ));
        }
        if let StepKind::Run { workload, .. } = &kind
            && crate::lua::is_script(workload)
        {
            return Err(src.error(
                span,
                format!(
                    "workload = {workload:?}: client_hosts run built-in workloads (a script would have to be on every host)"
                ),
            ));
        }
    }
    let search = search(src, span.clone(), def, &kind, crash.is_some(), sweep)?;
    let step = Step {
        name,
        kind,
        crash,
        optional: def.optional,
        search,
    };
    // Every workload step is checked as its `dbsweep run` would be, at every client count.
    if matches!(step.kind, StepKind::Run { .. } | StepKind::Load(..)) {
        at_every_count(src, span, &step, sweep)?;
    }
    Ok(step)
}

/// A step of roles: the measured role is the step's workload (with its clients and rate, when
/// it says them), the others run beside it (`--role`). The step as a plain one, and the
/// options that say so.
fn with_roles(src: &Source, span: Span, def: &StepDef) -> Result<(StepDef, StepOptions), Error> {
    let roles = match &def.roles {
        None => return Ok((def.clone(), StepOptions::default())),
        Some(r) if r.is_empty() => {
            return Err(src.error(
                span,
                "roles = []: a step of roles names its groups, one of them with measured = true; \
                 leave roles out for a step of one workload",
            ));
        }
        Some(r) => r,
    };
    if def.workload.is_some() || def.load.is_some() || def.pause.is_some() {
        return Err(src.error(
            span,
            "roles name the step's workloads: leave out workload, load and pause",
        ));
    }
    let measured: Vec<&RoleDef> = roles.iter().filter(|r| r.measured).collect();
    let [m] = measured.as_slice() else {
        return Err(src.error(
            span,
            format!(
                "roles: {} of them say measured = true; mark exactly one (the step's figures are its)",
                measured.len()
            ),
        ));
    };
    let mut plain = def.clone();
    plain.workload = Some(m.workload.clone());
    let options = StepOptions {
        clients: m.clients,
        rate: m.rate,
        roles: roles
            .iter()
            .filter(|r| !r.measured)
            .map(|r| crate::cli::RoleSpec {
                workload: r.workload.clone(),
                clients: r.clients,
                rate: r.rate,
            })
            .collect(),
        ..StepOptions::default()
    };
    Ok((plain, options))
}

/// What a step does: a workload for its class's time, a load, or a pause.
fn step_kind(src: &Source, span: Span, def: &StepDef, file: &PlanFile) -> Result<StepKind, Error> {
    Ok(if let Some(workload) = &def.workload {
        let Some(class) = def.class else {
            return Err(src.error(
                span,
                format!("step {workload}: needs class = \"read\", \"write\", \"warmup\" or \"once\" (how long it runs)"),
            ));
        };
        let options = StepOptions {
            table: merge_options(workload, &file.options, &def.options),
            ..StepOptions::default()
        };
        let events = options.value::<u64>("events").is_some_and(|n| n > 0);
        if class == Class::Once && !events {
            return Err(src.error(
                span,
                format!(
                    "step {workload}: class = \"once\" runs a fixed number of events without a \
                     time limit; give it options = {{ events = N }}"
                ),
            ));
        }
        StepKind::Run {
            workload: workload.clone(),
            class,
            options,
        }
    } else if let Some(load) = &def.load {
        if def.class.is_some() {
            return Err(src.error(
                span,
                "a load step takes no class: it is not measured as a workload",
            ));
        }
        let workload = match load {
            LoadDef::Workload(w) => w.clone(),
            LoadDef::Sysbench(_) => SYSBENCH_LOAD.into(),
        };
        let options = StepOptions {
            table: merge_options(&workload, &file.options, &def.options),
            ..StepOptions::default()
        };
        StepKind::Load(workload, options)
    } else {
        let pause = match def.pause.as_ref().expect("counted") {
            toml::Value::String(s) if s == "postwrite" => Pause::Postwrite,
            toml::Value::Integer(i) if (0..=crate::plan::MAX_SECONDS as i64).contains(i) => {
                Pause::Seconds(*i as f64)
            }
            toml::Value::Float(f) if (0.0..=crate::plan::MAX_SECONDS).contains(f) => {
                Pause::Seconds(*f)
            }
            other => {
                return Err(src.error(
                    span,
                    format!(
                        "pause = {other}: use \"postwrite\" or a number of seconds from 0 to {} (a year)",
                        crate::plan::MAX_SECONDS
                    ),
                ));
            }
        };
        StepKind::Pause(pause)
    })
}

/// `search = { ... }`: a capacity search on a built-in workload's step, measured on this host.
fn search(
    src: &Source,
    span: Span,
    def: &StepDef,
    kind: &StepKind,
    crash: bool,
    sweep: &Sweep,
) -> Result<Option<crate::plan::Search>, Error> {
    let Some(d) = &def.search else {
        return Ok(None);
    };
    let StepKind::Run {
        workload, options, ..
    } = kind
    else {
        return Err(src.error(
            span,
            "search needs a workload step (it runs the workload at rising rates)",
        ));
    };
    let refuse = |why: &str| Err(src.error(span.clone(), format!("search: {why}")));
    if options.value::<f64>("rate").is_some_and(|r| r > 0.0)
        || options.value::<String>("phases").is_some()
    {
        return refuse("the search sets each probe's rate; leave out rate and phases");
    }
    if crate::lua::is_script(workload) {
        return refuse("a sysbench script's step cannot search (its rate is the script's)");
    }
    if crash {
        return refuse("a crash step runs once; a search runs many probes");
    }
    if def.roles.is_some() {
        return refuse(
            "a step with roles cannot search (the groups beside it would change with each probe)",
        );
    }
    if !sweep.file.client_hosts.is_empty() {
        return refuse("client_hosts run one rate at one instant; a search runs on this host");
    }
    crate::plan::Search::new(
        d.percentile.unwrap_or(99.0),
        d.limit_ms,
        d.precision.unwrap_or(5.0) / 100.0,
        d.max_probes.unwrap_or(14),
        d.max_probe_time.unwrap_or(60.0),
    )
    .map(Some)
    .map_err(|(what, why)| src.error(span, format!("search: {what}: {why}")))
}

/// `crash = true` (and `crash_after`): the seconds into the measured part; managed servers only.
fn crash(
    src: &Source,
    span: Span,
    def: &StepDef,
    kind: &StepKind,
    sweep: &Sweep,
) -> Result<Option<f64>, Error> {
    let crash = match (def.crash, def.crash_after) {
        (false, None) => None,
        (false, Some(_)) => {
            return Err(src.error(span, "crash_after needs crash = true"));
        }
        (true, after) => {
            let after = after.unwrap_or(0.0);
            if !matches!(kind, StepKind::Run { .. }) {
                return Err(src.error(
                    span,
                    "crash = true needs a workload step (the server crashes while it runs)",
                ));
            }
            if !(0.0..=crate::plan::MAX_SECONDS).contains(&after) {
                return Err(src.error(
                    span,
                    format!("crash_after = {after}: seconds into the measured part, from 0"),
                ));
            }
            if let Some(t) = sweep
                .targets
                .iter()
                .find(|t| !matches!(t.spec, TargetSpec::Managed(_)))
            {
                return Err(src.error(
                    span,
                    format!(
                        "crash = true needs managed servers (server = \"...\"): dbsweep kills and restarts only the servers it started, and target {} is not one",
                        t.name
                    ),
                ));
            }
            Some(after)
        }
    };
    Ok(crash)
}

/// The step's `dbsweep run` line at every client count of the plan, checked as the run checks
/// it (a script's options by the script), and `pipeline` against the targets.
fn at_every_count(src: &Source, span: Span, step: &Step, sweep: &Sweep) -> Result<(), Error> {
    for &clients in &sweep.file.clients {
        let (plan, _) = sweep
            .step_workload(step, clients, None)
            .map_err(|e| src.error(span.clone(), format!("step {}: {e}", step.name)))?;
        // The crash must come while the workload runs: found here, not after the load.
        if let (Some(after), Some(time)) = (step.crash, plan.runner.time)
            && time > 0.0
            && after >= time
        {
            return Err(src.error(
                span.clone(),
                format!(
                    "step {}: crash_after = {after} is not within the step's {time} s of \
                     measured time: the server would not crash while the workload runs",
                    step.name
                ),
            ));
        }
        for t in &sweep.targets {
            if let Err(why) =
                crate::plan::check_pipeline(plan.workload_opts.pipeline, t.spec.dialect())
            {
                return Err(src.error(
                    span.clone(),
                    format!(
                        "step {}: pipeline: {why}, and target {} is not one",
                        step.name, t.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::super::cells::StepKind;
    use super::super::{ONE_STEP, refused};

    #[test]
    fn steps_are_named_apart_and_crash_only_managed_servers() {
        let e = refused(&format!("{ONE_STEP}{ONE_STEP}"));
        assert!(
            e.contains("two measured steps are called oltp_point_select"),
            "{e}"
        );
        let e = refused(&format!("{ONE_STEP}crash_after = 2\n"));
        assert!(e.contains("crash_after needs crash = true"), "{e}");
        let e = refused(&format!("{ONE_STEP}crash = true\n"));
        assert!(e.contains("crash = true needs managed servers"), "{e}");
        // A crash past the step's measured time is found before anything runs.
        let managed = "read_time = 5\n[[targets]]\nserver = \"postgres\"\n";
        let e = refused(&format!(
            "{managed}{ONE_STEP}crash = true\ncrash_after = 30\n"
        ));
        assert!(
            e.contains("crash_after = 30 is not within the step's 5 s"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_list_of_roles_is_refused() {
        let e = refused("[[steps]]\nname = \"x\"\nroles = []\n");
        assert!(e.contains("roles = []"), "{e}");
    }

    #[test]
    fn a_step_run_once_needs_its_events_and_has_no_time_limit() {
        let once = "[[steps]]\nworkload = \"oltp_point_select\"\nclass = \"once\"\n";
        let e = refused(once);
        assert!(e.contains("options = { events = N }"), "{e}");
        let e = refused(&format!("{once}options = {{ events = 0 }}\n"));
        assert!(e.contains("events = N"), "{e}");
        let s = super::super::super::Sweep::parse(
            "p.toml",
            &format!("{once}options = {{ events = 3 }}\n"),
            &Default::default(),
        )
        .unwrap();
        let plan = s.step_plan(&s.steps[0], 1, "sqlite://x.db").unwrap();
        assert_eq!(plan.runner.events.map(|e| e.get()), Some(3));
        assert_eq!(plan.runner.time, None);
    }

    #[test]
    fn each_step_is_checked_at_every_client_count() {
        // pipeline is PostgreSQL's: the default SQLite target refuses it.
        let e = refused(&format!("{ONE_STEP}options = {{ pipeline = true }}\n"));
        assert!(e.contains("pipeline"), "{e}");
        // More clients than threads allowed, unpaced: refused at that count, not the first.
        let many = crate::plan::MAX_WORKERS + 1;
        let e = refused(&format!("clients = [1, {many}]\n{ONE_STEP}"));
        assert!(
            e.starts_with("p.toml:2: step oltp_point_select:")
                && e.contains(&format!("{many} clients")),
            "{e}"
        );
    }

    #[test]
    fn a_step_of_roles_is_its_measured_role_with_the_others_beside_it() {
        let roles = "[[steps]]\nclass = \"read\"\nroles = [ { workload = \"oltp_point_select\", clients = 3, measured = true }, { workload = \"oltp_insert\", rate = 100 } ]\n";
        let s = super::super::super::Sweep::parse(
            "p.toml",
            roles,
            &crate::cli::SweepOverrides::default(),
        )
        .expect("a plan of roles");
        let StepKind::Run { workload, .. } = &s.steps[0].kind else {
            panic!("a run step")
        };
        assert_eq!(workload, "oltp_point_select");
        // At the cell's 1 client, the measured role keeps its 3; the other runs at its rate.
        let plan = s.step_plan(&s.steps[0], 1, "sqlite://x.db").unwrap();
        assert_eq!(plan.runner.threads, 3);
        let [beside] = plan.roles.as_slice() else {
            panic!("one role beside: {:?}", plan.roles)
        };
        assert_eq!(beside.workload, "oltp_insert");
        assert_eq!(beside.runner.rate, Some(100.0));
        let none = roles.replace("measured = true", "measured = false");
        let e = refused(&none);
        assert!(e.contains("0 of them say measured = true"), "{e}");
        let e = refused(&format!(
            "{ONE_STEP}roles = [ {{ workload = \"oltp_insert\", measured = true }} ]\n"
        ));
        assert!(e.contains("leave out workload"), "{e}");
        let e = refused(&roles.replace("oltp_insert", "nope"));
        assert!(e.contains("--role: nope"), "{e}");
    }
}
