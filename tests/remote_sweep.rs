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
    let out = local_ok(&["report".as_ref(), dir.as_os_str()]);
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
