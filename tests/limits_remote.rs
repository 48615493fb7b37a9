//! The network as a ceiling: a server on another host (a network namespace behind a veth,
//! whose link to its client the kernel's token bucket shapes to 40 Mbit/s) has its data
//! directory out of reach, so `dbsweep limits` and a sweep's `limits = true` measure its
//! connection (the round trip of the protocol's least request, a large result's bandwidth),
//! and a step whose results fill the link is named bound by the network's bandwidth.

use std::process::Command;

use dbsweep::server::ServerKind;
use serde_json::Value;

use crate::remote::Hosts;
use crate::util::{Scratch, read_json};

/// The shaped link, Mbit/s (5 MB/s).
const LINK_MBIT: u32 = 40;

fn shape(hosts: &Hosts) {
    let out = Command::new("ip")
        .args(["netns", "exec", &hosts.server_ns])
        .args(["tc", "qdisc", "add", "dev", "to0", "root", "tbf"])
        .args([
            "rate",
            &format!("{LINK_MBIT}mbit"),
            "burst",
            "32kb",
            "latency",
            "200ms",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_remote_servers_connection_is_its_ceiling_and_a_step_filling_it_is_bound_by_it() {
    let kind = ServerKind::Mariadb;
    let hosts = Hosts::new(kind, 1);
    shape(&hosts);
    let s = Scratch::new();
    let (db, _) = hosts.urls(kind, 0);
    // `dbsweep limits` on the client host: the data directory is the other host's.
    let out = hosts
        .dbsweep(0, &["limits", "--target", &db, "--seconds", "2", "--out"])
        .arg(s.path("limits.json"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("is not on this host"), "{stderr}");
    assert!(stdout.starts_with("network to mysql://"), "{stdout}");
    let l = read_json(&s.path("limits.json"));
    assert_eq!(l["figures"], Value::Array(Vec::new()), "no disk here: {l}");
    let n = &l["network"];
    assert_eq!(n["local"], false, "{n}");
    assert!(n["round_trips"].as_u64().unwrap() > 10, "{n}");
    let mb_s = n["result_mb_s"].as_f64().unwrap();
    let link = f64::from(LINK_MBIT) / 8.0;
    assert!(
        mb_s > link * 0.6 && mb_s < link * 1.2,
        "{mb_s} MB/s on a {link} MB/s link"
    );

    // A sweep whose range reads fill the link.
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"remote\"\ntable_size = 10000\nread_time = 3\n\
             limits = {{ seconds = 1 }}\n\
             [[targets]]\nname = \"far\"\nurl = \"{db}\"\n\
             [[steps]]\nload = true\n\
             [[steps]]\nname = \"ranges\"\nworkload = \"oltp_read_only\"\nclass = \"read\"\n\
             options = {{ range_size = 1000 }}\n"
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let plan_s = plan.display().to_string();
    let dir_s = dir.display().to_string();
    hosts.run_ok(0, &["sweep", &plan_s, "--output", &dir_s]);
    let kept = read_json(&dir.join("limits.json"));
    assert_eq!(kept["far"]["network"]["local"], false, "{kept}");
    let report = hosts
        .dbsweep(0, &["report", "--format", "json", &dir_s])
        .output()
        .unwrap();
    assert!(report.status.success());
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let bounds = report
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "bounds")
        .unwrap_or_else(|| panic!("no bound table"));
    let row = &bounds["rows"][0];
    assert_eq!(row["label"], "ranges", "{bounds}");
    let by = row["cells"][1].as_str().unwrap();
    assert!(by.starts_with("network bandwidth"), "{bounds}");
    assert!(row["cells"][2].as_f64().unwrap() > 0.6, "{bounds}");
}
