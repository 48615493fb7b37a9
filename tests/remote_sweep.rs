//! A sweep whose steps run on client hosts over ssh (network namespaces as hosts), merged.

use std::path::Path;

use dbsweep::server::ServerKind;

use crate::remote::{Hosts, local_ok};
use crate::util::{Scratch, read_json, u};

#[test]
fn a_sweep_runs_each_step_on_the_client_hosts_over_ssh_and_merges_them() {
    let kind = ServerKind::Postgres;
    let hosts = Hosts::new(kind, 2);
    let s = Scratch::new();
    let (db, metrics) = hosts.urls(kind, 0);
    // ssh's stand-in: the same arguments, the host part naming a client host's namespace.
    let ssh = s.path("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do dest=$1; shift; done; shift\nexec ip netns exec \"${dest#*@}\" sh -c \"$*\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let plan = s.path("hosts.toml");
    let bin = assert_cmd::cargo::cargo_bin("dbsweep");
    std::fs::write(
        &plan,
        format!(
            r#"name = "hosts"
clients = [2, 4]
table_size = 10000
read_time = 3
write_time = 3
warmup_time = 1
client_hosts = ["ssh://bench@{c0}", "ssh://bench@{c1}"]
client_dbsweep = "{bin}"

[[targets]]
name = "pg"
url = "{db}"
metrics = "{metrics}"

[[steps]]
name = "load"
load = true

[[steps]]
name = "point-query"
workload = "oltp_point_select"
class = "read"
"#,
            c0 = hosts.clients[0].0,
            c1 = hosts.clients[1].0,
            bin = bin.display(),
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    // The sweep runs on the first client host (it loads the tables itself).
    let out = hosts
        .dbsweep(
            0,
            &[
                "sweep",
                &plan.display().to_string(),
                "--output",
                &dir.display().to_string(),
                // The tables of a URL target are the user's: each cell reloads them.
                "--force",
            ],
        )
        .env("DBSWEEP_SSH", &ssh)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ids = [&hosts.clients[0].0, &hosts.clients[1].0];
    let mut records = 0;
    for entry in walk(&dir) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if !name.contains("point-query")
            || !name.ends_with(".json")
            || ids.iter().any(|id| name.contains(id.as_str()))
        {
            continue;
        }
        let rec = read_json(&entry);
        let r = &rec["results"];
        let parts = r["parts"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {rec}"));
        assert_eq!(parts.len(), 2, "{name}");
        let clients = u(&rec, "/clients");
        assert_eq!(
            u(r, "/threads"),
            clients,
            "{name}: the cell's clients over both hosts"
        );
        for p in parts {
            assert_eq!(u(p, "/threads"), clients / 2);
        }
        assert_eq!(
            u(r, "/events"),
            parts.iter().map(|p| u(p, "/events")).sum::<u64>()
        );
        assert!(r["server_host"]["note"].is_null(), "{}", r["server_host"]);
        // The hosts' own files and logs are kept beside the record.
        for id in ids {
            for ext in ["json", "log"] {
                let part = entry
                    .parent()
                    .unwrap()
                    .join("hosts")
                    .join(name.replace(".json", &format!(".{id}.{ext}")));
                assert!(part.exists(), "{}", part.display());
            }
        }
        records += 1;
    }
    assert_eq!(records, 2, "one point-query step per client count");
    // The report's queueing model has the server host's CPU and the network.
    let out = local_ok(&["report".as_ref(), "--full".as_ref(), dir.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("D net "), "{text}");
    assert!(text.contains("server host CPU us/op"), "{text}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Every process's command line (NUL-separated arguments joined by spaces), by pid.
fn command_lines() -> Vec<(u32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            Some((pid, String::from_utf8_lossy(&raw).replace('\0', " ")))
        })
        .collect()
}

/// Waits up to `bound` for `done`, looking every 50 ms; whether it came.
fn within(bound: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + bound;
    while std::time::Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    done()
}

#[test]
fn client_hosts_get_the_password_off_the_command_line_and_stop_with_the_sweeps_ctrl_c() {
    use std::time::Duration;
    let kind = ServerKind::Postgres;
    let hosts = Hosts::new(kind, 2);
    let s = Scratch::new();
    let (db, _) = hosts.urls(kind, 0);
    // The managed server trusts its users: the password is never checked, only carried.
    let secret = "Pw-on-no-cmdline-7";
    let db = db.replacen("sbtest@", &format!("sbtest:{secret}@"), 1);
    // ssh's stand-in, as ssh and sshd behave without a terminal: the remote command's standard
    // input is a pipe from the local ssh, and killing that ssh closes it; nothing else reaches
    // the remote command (no signal). (A background list's input is /dev/null unless
    // redirected: hence fd 3.)
    let ssh = s.path("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do dest=$1; shift; done; shift\nexec 3<&0\ncat <&3 | ip netns exec \"${dest#*@}\" sh -c \"$*\" &\nwait $!\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let plan = s.path("long.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"long\"\nclients = [2]\ntable_size = 1000\nread_time = 600\nwarmup_time = 1\n\
             client_hosts = [\"ssh://bench@{}\", \"ssh://bench@{}\"]\nclient_dbsweep = \"{}\"\n\n\
             [[targets]]\nname = \"pg\"\nurl = \"{db}\"\n\n\
             [[steps]]\nname = \"load\"\nload = true\n\n\
             [[steps]]\nname = \"point-query\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
            hosts.clients[0].0,
            hosts.clients[1].0,
            assert_cmd::cargo::cargo_bin("dbsweep").display(),
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let mut sweep = hosts
        .dbsweep(
            0,
            &[
                "sweep",
                plan.to_str().unwrap(),
                "--output",
                dir.to_str().unwrap(),
                "--force",
            ],
        )
        .env("DBSWEEP_SSH", &ssh)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(s.path("sweep.err")).unwrap())
        .spawn()
        .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("dbsweep")
        .display()
        .to_string();
    let mine = format!("-{}-", sweep.id());
    // The hosts' runs, as `ps` would show them; no process's arguments may hold the password.
    let mut exposed = Vec::new();
    let mut remote = || {
        let lines = command_lines();
        exposed.extend(lines.iter().filter(|(_, l)| l.contains(secret)).cloned());
        lines
            .iter()
            .filter(|(_, l)| {
                // This sweep's (other tests' sweeps run at once): their results files are
                // named after the sweep's pid.
                l.starts_with(&bin) && l.contains("--target-stdin") && l.contains(&mine)
            })
            .count()
    };
    let started = within(Duration::from_secs(120), || remote() >= 2);
    if !started {
        let logs: Vec<String> = walk(&dir)
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .collect();
        let err = std::fs::read_to_string(s.path("sweep.err")).unwrap_or_default();
        panic!("the client hosts' runs did not start: {err}\n{logs:?}");
    }
    unsafe { libc::kill(sweep.id() as libc::pid_t, libc::SIGINT) };
    let gone = within(Duration::from_secs(15), || remote() == 0);
    let status = crate::util::wait_bounded(&mut sweep);
    let err = std::fs::read_to_string(s.path("sweep.err")).unwrap_or_default();
    assert!(
        gone,
        "the client hosts' runs outlived the sweep's Ctrl-C: {err}"
    );
    assert_eq!(status.code(), Some(130), "{status:?}: {err}");
    assert!(
        exposed.is_empty(),
        "the password in a command line: {exposed:?}"
    );
}

/// The sweep's connection bounds reach its client hosts' runs: `--connect-timeout` and
/// `--query-timeout` given to the sweep are on the command line each host runs.
#[test]
fn a_client_hosts_run_gets_the_sweeps_connection_bounds() {
    let server = crate::util::start(ServerKind::Postgres);
    let s = Scratch::new();
    let log = s.path("ssh.log");
    // ssh's stand-in: the command logged, then run here (both hosts are this one).
    let ssh = s.path("ssh");
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done; shift\necho \"$*\" >> {}\nexec sh -c \"$*\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ssh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let plan = s.path("bounds.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"bounds\"\nclients = [2]\ntable_size = 1000\nread_time = 1\n\
             client_hosts = [\"ssh://bench@localhost\", \"ssh://bench@127.0.0.1\"]\nclient_dbsweep = \"{}\"\n\n\
             [[targets]]\nname = \"pg\"\nurl = \"{}\"\n\n\
             [[steps]]\nname = \"load\"\nload = true\n\n\
             [[steps]]\nname = \"point-query\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
            assert_cmd::cargo::cargo_bin("dbsweep").display(),
            server.url,
        ),
    )
    .unwrap();
    let out = crate::util::dbsweep()
        .args(["--connect-timeout", "7", "--query-timeout", "9", "sweep"])
        .arg(&plan)
        .arg("--output")
        .arg(s.path("sweep"))
        .arg("--force")
        .env("DBSWEEP_SSH", &ssh)
        .timeout(crate::util::HANG)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ran.contains("--target-stdin"), "a host ran the step: {ran}");
    assert!(
        ran.contains("--connect-timeout=7") && ran.contains("--query-timeout=9"),
        "{ran}"
    );
}
