//! `dbsweep limits` against fio, the reference tool, in the same test run, with the same block
//! size, queue depth, direct flag and file size. A test binary of its own: cargo runs test
//! binaries one after another, so the disk and the CPUs are not shared with the rest of the
//! suite's servers and loads while the two are compared (in the suite's binary, a third of the
//! pairs moved by 0.55-4.9x with the other tests' IO).

use std::path::Path;
use std::process::Command;

#[path = "../bench/fio.rs"]
mod fio;

fn have_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A file of `mb` MiB written through, as the probe lays its own out.
fn laid_out(dir: &Path, name: &str, mb: u32) -> std::path::PathBuf {
    let p = dir.join(name);
    fio::lay_out(&p, mb);
    p
}

/// dbsweep's rate for one probe.
fn ours(dir: &Path, only: &str, depth: u32, writers: u32, size: &str, seconds: u32) -> f64 {
    let figs = fio::dbsweep_limits(
        dir,
        &[
            "--only".into(),
            only.into(),
            format!("--size={size}"),
            format!("--depths={depth}"),
            format!("--writers={writers}"),
            format!("--seconds={seconds}"),
        ],
    );
    // The commit probes give one writer first, then `writers`.
    let f = figs
        .iter()
        .find(|f| f["writers"].as_u64() == Some(u64::from(writers)))
        .unwrap_or(&figs[0]);
    f["iops"].as_f64().unwrap()
}

#[test]
fn each_probe_is_within_a_quarter_of_fios_figure() {
    if !have_fio() {
        panic!("fio is not installed: scripts/machine installs it");
    }
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let data = laid_out(dir.path(), "fio.data", 512);
    let log = laid_out(dir.path(), "fio.log", 64);
    let direct = ["--direct=1", "--ioengine=io_uring"];
    // (probe, depth, writers, fio's file and arguments)
    let cases: Vec<(&str, u32, u32, &Path, Vec<&str>)> = vec![
        (
            "random-read",
            1,
            1,
            &data,
            vec!["--rw=randread", "--bs=16k", "--iodepth=1"],
        ),
        (
            "random-read",
            16,
            1,
            &data,
            vec!["--rw=randread", "--bs=16k", "--iodepth=16"],
        ),
        (
            "random-write",
            16,
            1,
            &data,
            vec!["--rw=randwrite", "--bs=16k", "--iodepth=16"],
        ),
        (
            "sequential-read",
            4,
            1,
            &data,
            vec!["--rw=read", "--bs=1M", "--iodepth=4"],
        ),
        (
            "sequential-write",
            4,
            1,
            &data,
            vec!["--rw=write", "--bs=1M", "--iodepth=4"],
        ),
        (
            "fdatasync",
            1,
            1,
            &log,
            vec!["--rw=write", "--bs=4k", "--ioengine=psync", "--fdatasync=1"],
        ),
        (
            "fdatasync",
            1,
            4,
            &log,
            vec![
                "--rw=write",
                "--bs=4k",
                "--ioengine=psync",
                "--fdatasync=1",
                "--numjobs=4",
                "--size=16M",
                "--offset_increment=16M",
            ],
        ),
        (
            "fsync",
            1,
            1,
            &log,
            vec!["--rw=write", "--bs=4k", "--ioengine=psync", "--fsync=1"],
        ),
    ];
    let mut off = Vec::new();
    for (probe, depth, writers, file, args) in cases {
        let mut args: Vec<&str> = args;
        if !probe.contains("sync") {
            args.extend(direct);
        }
        if !args.iter().any(|a| a.starts_with("--size")) {
            args.push(if *file == *data {
                "--size=512M"
            } else {
                "--size=64M"
            });
        }
        // A shared disk's rate moves from second to second, and other tests load it too: the
        // probe runs between two fio runs and holds when it lies within 0.8 of the lower and
        // 1.25 of the higher (the same conditions as fio's on either side), up to three times.
        let mut seen = Vec::new();
        let held = (0..3).any(|_| {
            let before = fio::run(file, 1, &args).iops;
            let mine = ours(dir.path(), probe, depth, writers, "512M", 1);
            let after = fio::run(file, 1, &args).iops;
            seen.push(format!("{before:.0} {mine:.0} {after:.0}"));
            mine >= 0.8 * before.min(after) && mine <= 1.25 * before.max(after)
        });
        if !held {
            off.push(format!("{probe} depth {depth} writers {writers}: {seen:?}"));
        }
    }
    assert!(off.is_empty(), "dbsweep / fio outside 0.8-1.25: {off:#?}");
    // Only fio's files are left: the probe's are gone.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".dbsweep"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
