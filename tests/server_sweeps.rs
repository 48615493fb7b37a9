//! Sweeps over managed servers: a load and a point step per cell, a cell whose server does not
//! start, IO-bound configurations with a memory limit.

use dbsweep::server::ServerKind;

use crate::util::{Scratch, dbsweep, read_json};

per_server!(
    small_plan_sweeps_with_counters_and_hardware_figures,
    |kind| {
        let s = Scratch::new();
        let dir = s.path("sweep");
        let name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        let output = dbsweep()
            .args(["sweep", "small", "--server", name, "--table-size", "5000"])
            .args([
                "--read-time",
                "0.5",
                "--write-time",
                "0.5",
                "--warmup-time",
                "0.5",
            ])
            .args(["--postwrite-pause", "1", "--output"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // docs/workloads.md section 4: 40 steps with the load and the two postwrite pauses.
        crate::sweep::assert_complete(&dir, 40, true);
        let recs = crate::sweep::records(&dir);
        let step = |n: &str| {
            &recs
                .iter()
                .find(|r| r.0.ends_with(&format!("-{n}.json")))
                .unwrap_or_else(|| panic!("no step {n}"))
                .1
        };
        let pause = step("postwrite")["pause"]["actions"].to_string();
        let stats = &step("update-index")["results"]["server_stats"];
        if kind == ServerKind::Postgres {
            assert!(
                pause.contains("VACUUM (ANALYZE) sbtest1") && pause.contains("CHECKPOINT"),
                "{pause}"
            );
            assert!(
                stats["deltas"]["pg_stat_database.xact_commit"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
            assert!(stats["log_bytes_per_op"].as_f64().unwrap() > 0.0, "{stats}");
        } else {
            assert!(
                pause.contains("InnoDB dirty pages flushed")
                    && pause.contains("ANALYZE TABLE sbtest1"),
                "{pause}"
            );
            assert!(
                stats["deltas"]["global_status.Com_update"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
            assert!(
                stats["innodb_status"]
                    .as_str()
                    .unwrap()
                    .contains("BUFFER POOL AND MEMORY")
            );
            assert!(stats["pages_written_per_op"].is_number(), "{stats}");
        }
        // Warm-up steps run but are not reported.
        assert_eq!(step("scan.warmup")["reported"], false);
        assert_eq!(step("scan")["reported"], true);
        let rows = step("scan")["results"]["rows_per_s"].as_f64().unwrap();
        assert!(rows > 0.0, "a scan's throughput is rows scanned");
        let env = read_json(&dir.join("environment.json"));
        assert!(env["servers"][name].as_str().is_some(), "{env}");
    }
);

/// Writes a plan of `head` (name, sizes, targets, configurations) followed by a load step and
/// a point-select step, and runs it as a sweep into the scratch directory's `sweep`.
fn sweep_load_and_point(s: &Scratch, head: &str) -> (std::process::Output, std::path::PathBuf) {
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "{head}[[steps]]\nload = true\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n"
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let out = dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .output()
        .unwrap();
    (out, dir)
}

per_server!(a_cell_whose_server_does_not_start_fails_its_steps, |kind| {
    // A setting the server refuses: it exits before accepting connections.
    let s = Scratch::new();
    let name = format!("{kind:?}").to_lowercase();
    let (out, dir) = sweep_load_and_point(
        &s,
        &format!(
            "name = \"bad\"\ntable_size = 1000\nread_time = 0.5\n\
             [[targets]]\nserver = \"{name}\"\n\
             [configs.broken]\nsettings = {{ no_such_setting = \"1\" }}\n"
        ),
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("0 step(s) done, 2 failed"), "{stdout}");
    assert!(
        stderr.contains("the database did not start") && stderr.contains("no_such_setting"),
        "{stderr}"
    );
    let recs = crate::sweep::records(&dir);
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|(_, r)| r["status"] == "failed"));
});

per_server_in_turn!(io_bound_configuration_limits_the_server, |kind| {
    let s = Scratch::enterable();
    let (name, settings) = if kind == ServerKind::Postgres {
        ("postgres", "shared_buffers = \"16MB\"")
    } else {
        (
            "mariadb",
            "innodb_buffer_pool_size = \"8M\", innodb_flush_method = \"O_DIRECT\"",
        )
    };
    // The data directory goes on the disk under test.
    let disk = s.path("disk");
    std::fs::create_dir(&disk).unwrap();
    let (output, dir) = sweep_load_and_point(
        &s,
        &format!(
            "name = \"io\"\ntable_size = 20000\nread_time = 1\n\
             [[targets]]\nserver = \"{name}\"\ndatadir_in = {:?}\n\
             [configs.iobound]\nsettings = {{ {settings} }}\ndrop_caches = true\nmemory_limit = \"256M\"\n",
            disk.display().to_string()
        ),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let in_disk = format!(" in {}/dbsweep-{name}-", disk.display());
    assert!(stderr.contains(&in_disk), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&disk).unwrap().count(),
        0,
        "the server's data directory was left behind"
    );
    let recs = crate::sweep::records(&dir);
    assert_eq!(recs.len(), 2);
    let notes = recs[0].1["notes"].to_string();
    assert!(notes.contains("limited to 256 MB"), "{notes}");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            recs[1].1["notes"]
                .to_string()
                .contains("OS page cache dropped")
        );
    }
    let point = &recs[1].1["results"];
    assert_eq!(
        point["server"]["settings"].as_object().unwrap().len(),
        settings.matches('=').count()
    );
    let stats = &point["server_stats"];
    assert!(stats["hit_rate"].as_f64().unwrap() <= 1.0, "{stats}");
});
