//! The report's checks on what it is given: inputs run differently, and a server CPU figure the
//! machine's own figure contradicts.

use crate::report::{fixture, fixture_copy, text_row};
use crate::util::{Scratch, dbsweep};

/// Issue 18: `report A B` of runs with different table sizes and durations says so first.
#[test]
fn a_report_of_inputs_run_differently_says_how_they_differ() {
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .arg(fixture("cmp-a.json"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.starts_with("Warning: the inputs did not run alike"),
        "{text}"
    );
    let row = text_row(&text, "did not run alike", "table_size");
    assert!(row.contains("20000") && row.contains("100000"), "{row}");
    assert!(text_row(&text, "did not run alike", "time").contains("10"));
    // Two copies of one sweep ran alike: no warning.
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .arg(&copy)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(!text.contains("did not run alike"), "{text}");
}

/// A server CPU figure that the machine's contradicts is flagged in the server CPU tables.
#[test]
fn a_server_cpu_figure_the_machine_contradicts_is_flagged() {
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    // Make one step's server CPU nearly nothing while the machine stays busy.
    let cell = std::fs::read_dir(copy.join("steps"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .min()
        .unwrap();
    let step = std::fs::read_dir(&cell)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            r["results"]["hw"]["cpu_us_per_op"]["machine"]
                .as_f64()
                .unwrap_or(0.0)
                - r["results"]["hw"]["cpu_us_per_op"]["client"]
                    .as_f64()
                    .unwrap_or(0.0)
                > 5.0
        })
        .min()
        .expect("a step with hardware figures");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&step).unwrap()).unwrap();
    r["results"]["hw"]["cpu_us_per_op"]["server"] = serde_json::json!(0.01);
    std::fs::write(&step, serde_json::to_string(&r).unwrap()).unwrap();
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&copy)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains(
            "server CPU 0.010 us/op is far below what the machine spent beyond the client"
        ),
        "{text}"
    );
    // The flagged figure shows as ? and enters no ratio: the base column's figure is the
    // flagged one, so no column of its row in the relative table has a ratio.
    let test = r["name"].as_str().unwrap();
    let clients = r["results"]["threads"].as_u64().unwrap();
    let abs = crate::report::text_row(
        &text,
        &format!("Efficiency, server CPU us/op at {clients} client(s) (lower"),
        test,
    );
    assert_eq!(abs.split_whitespace().nth(1), Some("?"), "{abs}");
    let title = format!("Efficiency, server CPU us/op, relative to default at {clients} client(s)");
    // With no other ratio in it, the relative table is left out; where it is there, the row
    // has none either.
    if text.contains(&title) {
        let rel = crate::report::text_row(&text, &title, test);
        let cells: Vec<&str> = rel.split_whitespace().skip(1).collect();
        assert_eq!(cells.first(), Some(&"?"), "{rel}");
        assert!(
            cells.iter().all(|c| c.parse::<f64>().is_err()),
            "a ratio to a flagged base: {rel}"
        );
    }
    // The fixture as it is has no such warning.
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(!text.contains("far below what the machine spent"), "{text}");
}

/// No ratio without a basis: where the base column's figure is 0 and another's is not (reads
/// per event of a cached table), the relative tables show `-`, never inf, and no group median
/// takes such a cell.
#[test]
fn a_zero_base_gives_no_ratio() {
    for format in ["json", "csv", "markdown"] {
        let out = dbsweep()
            .args(["report", "--full"])
            .arg(fixture("sweep-a"))
            .args(["--format", format])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            !text.contains("inf\"") && !text.contains(",inf"),
            "{format}: {text}"
        );
        assert!(!text.contains("| inf"), "{format}");
    }
}
