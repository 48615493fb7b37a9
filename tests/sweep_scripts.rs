//! sysbench scripts as sweep steps, and repeated steps: medians, intervals and no difference
//! against itself.

use crate::sweep::assert_complete;
use crate::sweep::write_plan;
use crate::util::{Scratch, dbsweep, read_json, u};

#[test]
fn sysbench_scripts_are_sweep_steps() {
    let s = Scratch::new();
    let text = r#"
name = "lua"
clients = [1, 2]
table_size = 1000
read_time = 0.5
write_time = 0.5

[[steps]]
load = true

[[steps]]
name = "ro-lua"
workload = "/usr/share/sysbench/oltp_read_only.lua"
class = "read"
options = { skip_trx = true, range_size = 5 }
"#;
    let plan = write_plan(&s, text);
    let dir = s.path("sweep");
    dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .assert()
        .success();
    assert_complete(&dir, 4, false);
    for c in [1, 2] {
        let r = read_json(&dir.join(format!("steps/sqlite.default.c{c}/02-ro-lua.json")));
        let res = &r["results"];
        assert_eq!(res["threads"], c);
        // The script's own option was applied: 14 reads per event and no BEGIN/COMMIT.
        let events = u(res, "/events");
        assert!(events > 0);
        assert_eq!(u(res, "/queries/read"), 14 * events);
        assert_eq!(u(res, "/queries/other"), 0);
    }
    // The report groups the script as the workload of its name.
    dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "-- range queries with aggregation",
        ));
    // A missing script and a bad value of a script's option are the plan's errors.
    for (from, to, says) in [
        (
            "oltp_read_only.lua",
            "no_such.lua",
            "no_such.lua' not found",
        ),
        (
            "skip_trx = true",
            "skip_trx = \"maybe\"",
            "invalid option: --skip-trx=maybe",
        ),
    ] {
        let bad = write_plan(&s, &text.replace(from, to));
        dbsweep()
            .arg("sweep")
            .arg(&bad)
            .arg("--output")
            .arg(s.path("bad"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
        assert!(!s.path("bad").exists());
    }
}

#[test]
fn script_steps_call_init_and_done_around_each_run() {
    let s = Scratch::new();
    let log = s.path("life.log");
    let script = s.path("life.lua");
    std::fs::write(
        &script,
        r#"
sysbench.cmdline.options = { log = {"where init and done write", ""} }

local function say(what)
  local f = assert(io.open(sysbench.opt.log, "a"))
  f:write(what, "\n")
  f:close()
end

function init() say("init") started = true end
function done() say(started and "done after init" or "done alone") end
function event() end
"#,
    )
    .unwrap();
    let text = format!(
        r#"
name = "life"
clients = [1, 2]
read_time = 0.3

[[steps]]
name = "life"
workload = "{}"
class = "read"
options = {{ log = "{}" }}
"#,
        script.display(),
        log.display()
    );
    let dir = s.path("sweep");
    dbsweep()
        .arg("sweep")
        .arg(write_plan(&s, &text))
        .arg("--output")
        .arg(&dir)
        .assert()
        .success();
    // One main state per run, as `dbsweep run` (and sysbench) has: init before, done after.
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["init", "done after init", "init", "done after init"]
    );
}

/// Issue 18: `--repeat 3` runs every cell three times (fresh each time, interleaved), and the
/// report gives every figure as a median with its interval; a column against itself is no
/// difference.
#[test]
fn repeats_give_medians_and_intervals_and_no_difference_against_itself() {
    let s = Scratch::new();
    let plan = write_plan(
        &s,
        "name = \"rep\"\nclients = [1]\ntable_size = 1000\nread_time = 0.5\nrepeat = 3\n\n\
         [configs.a]\n[configs.b]\nsettings = { cache_size = \"-200\" }\n\n\
         [[steps]]\nload = true\n\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    );
    // --repeat overrides the plan's: the schedule has 2 configurations x 2 runs.
    let dry = dbsweep()
        .args([
            "sweep",
            plan.to_str().unwrap(),
            "--repeat",
            "2",
            "--dry-run",
        ])
        .assert()
        .success();
    let schedule = String::from_utf8_lossy(&dry.get_output().stdout).to_string();
    assert!(schedule.contains("= 4 cell(s)"), "{schedule}");
    assert!(schedule.contains("sqlite.b.c1.r2:"), "{schedule}");
    let dir = s.path("rep");
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--output"])
        .arg(&dir)
        .assert()
        .success();
    let mut cells: Vec<String> = std::fs::read_dir(dir.join("steps"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    cells.sort();
    assert_eq!(
        cells,
        [
            "sqlite.a.c1.r1",
            "sqlite.a.c1.r2",
            "sqlite.a.c1.r3",
            "sqlite.b.c1.r1",
            "sqlite.b.c1.r2",
            "sqlite.b.c1.r3"
        ]
    );
    // Interleaved: every cell's first run before any second run.
    let started = |cell: &str| {
        read_json(&dir.join(format!("steps/{cell}/01-load.json")))["started_at"]
            .as_u64()
            .unwrap()
    };
    assert!(started("sqlite.b.c1.r1") <= started("sqlite.a.c1.r2"));
    assert_eq!(
        read_json(&dir.join("steps/sqlite.a.c1.r2/02-point.json"))["repeat"],
        2
    );
    let out = dbsweep()
        .args(["report", "--full", "--format", "csv"])
        .arg(&dir)
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let point: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",point,") && !l.starts_with("scaling") && !l.starts_with("queue"))
        .filter(|l| l.starts_with("throughput") || l.starts_with("cpu_us_per_op"))
        .collect();
    assert!(!point.is_empty(), "{csv}");
    for line in &point {
        let f: Vec<&str> = line.rsplitn(3, ',').collect();
        let (hi, lo, value): (f64, f64, f64) = (
            f[0].parse()
                .unwrap_or_else(|_| panic!("no interval: {line}")),
            f[1].parse()
                .unwrap_or_else(|_| panic!("no interval: {line}")),
            f[2].rsplit(',').next().unwrap().parse().unwrap(),
        );
        assert!(lo <= value && value <= hi, "{line}");
    }
    // The base column against itself: an interval around 1.00, and so no colour.
    let rel = csv
        .lines()
        .find(|l| l.starts_with("throughput.relative,") && l.contains(",point,a,"))
        .unwrap_or_else(|| panic!("{csv}"));
    let f: Vec<f64> = rel
        .rsplitn(4, ',')
        .take(3)
        .map(|v| v.parse().unwrap())
        .collect();
    let (hi, lo, value) = (f[0], f[1], f[2]);
    assert!(
        lo <= 1.0 && 1.0 <= hi && (value - 1.0).abs() < 1e-9,
        "{rel}"
    );
    let out = dbsweep()
        .args(["report", "--full", "--format", "html"])
        .arg(&dir)
        .assert()
        .success();
    let html = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let row = html
        .split("<tr")
        .find(|r| r.contains("<td>point</td>") && r.contains("1.00 ["))
        .unwrap_or_else(|| panic!("no relative row with an interval"));
    // Each run's per-second series is told apart by its run.
    assert!(
        html.contains("a c1 r2") && html.contains("b c1 r3"),
        "series labels"
    );
    let base_cell = row.split("<td").nth(2).unwrap();
    assert!(
        !base_cell.contains("better") && !base_cell.contains("worse"),
        "{row}"
    );
    // compare takes the repeats as its samples: a column against itself is noise.
    let out = dbsweep()
        .arg("compare")
        .arg(&dir)
        .args(["--a", "a", "--b", "a"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("point "))
        .unwrap_or_else(|| panic!("{text}"));
    // Runs of a busy machine (a loaded test machine) are called no difference either.
    assert!(
        (line.contains("noise") || line.contains("busy machine")) && line.contains(" +0.0% ["),
        "{line}"
    );
}
