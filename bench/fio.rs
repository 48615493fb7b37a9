//! fio, the reference the probes of `dbsweep limits` are measured against (bench/limits_vs_fio
//! and tests/limits.rs both run it through here).

use std::path::Path;
use std::process::Command;

/// One fio job's figures.
pub struct Fio {
    /// Requests per second (all jobs).
    pub iops: f64,
    /// The jobs' user + system CPU microseconds per request (the bench's; the tests read
    /// only the rate).
    #[allow(dead_code)]
    pub cpu_us_per_io: f64,
}

/// Runs fio with `args` on `file` for `seconds`, its jobs reported as one.
pub fn run(file: &Path, seconds: u32, args: &[&str]) -> Fio {
    let out = Command::new("fio")
        .args([
            "--name=probe",
            "--output-format=json",
            "--time_based",
            "--group_reporting",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--runtime={seconds}"))
        .args(args)
        .output()
        .expect("fio runs (scripts/machine installs it)");
    assert!(
        out.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
    let j = &v["jobs"][0];
    let side = if j["read"]["total_ios"].as_u64().unwrap_or(0) > 0 {
        "read"
    } else {
        "write"
    };
    let ios = j[side]["total_ios"].as_f64().unwrap_or(0.0);
    let runtime_s = j[side]["runtime"].as_f64().unwrap_or(0.0) / 1e3;
    let cpu_s = (j["usr_cpu"].as_f64().unwrap_or(0.0) + j["sys_cpu"].as_f64().unwrap_or(0.0))
        / 100.0
        * runtime_s;
    Fio {
        iops: j[side]["iops"].as_f64().unwrap_or(0.0),
        cpu_us_per_io: cpu_s * 1e6 / ios.max(1.0),
    }
}

/// Writes a file of `mb` MiB through and syncs it, as the probes lay their own out.
pub fn lay_out(path: &Path, mb: u32) {
    let out = Command::new("fio")
        .args(["--name=layout", "--rw=write", "--bs=1M", "--end_fsync=1"])
        .arg(format!("--filename={}", path.display()))
        .arg(format!("--size={mb}M"))
        .output()
        .expect("fio runs (scripts/machine installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `dbsweep limits ARGS --dir DIR` and returns its figures (its `--out` JSON's).
pub fn dbsweep_limits(dir: &Path, args: &[String]) -> Vec<serde_json::Value> {
    let json = dir.join("limits.json");
    let out = Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .arg("limits")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .arg("--out")
        .arg(&json)
        .output()
        .expect("dbsweep runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("--out written"))
            .expect("its JSON");
    v["figures"].as_array().cloned().unwrap_or_default()
}
