//! `dbsweep report`, `compare` and `hdr` on committed fixtures made by real runs
//! (tests/fixtures/report/README.md).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{Scratch, dbsweep, read_json};

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(name)
}

fn report(args: &[&str]) -> String {
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// Compares `actual` with the snapshot file, or rewrites it when asked to.
fn snapshot(name: &str, actual: &str) {
    let path = fixture(name);
    if std::env::var_os("DBSWEEP_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (DBSWEEP_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from the snapshot at line {}:\nexpected: {:?}\nactual:   {:?}",
            first + 1,
            expected.lines().nth(first),
            actual.lines().nth(first)
        );
    }
}

/// The step record of a fixture cell.
fn step(cell: &str, file: &str) -> Value {
    read_json(&fixture("sweep-a/steps").join(cell).join(file))
}

#[test]
fn text_markdown_and_csv_match_their_snapshots() {
    snapshot("sweep-a.txt", &report(&["--color", "never"]));
    snapshot("sweep-a.md", &report(&["--format", "markdown"]));
    snapshot("sweep-a.csv", &report(&["--format", "csv"]));
}

#[test]
fn tables_hold_the_fixtures_figures() {
    // The CSV has one value per line: check figures against the step records themselves.
    let csv = report(&["--format", "csv"]);
    // Fields of one CSV line (quoted fields may hold commas).
    fn fields(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                '"' => quoted = !quoted,
                ',' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    }
    // The 1-client slice: the first of each table.
    let value = |table: &str, test: &str, column: &str| -> f64 {
        let f = csv
            .lines()
            .map(fields)
            .find(|f| {
                f[0] == table && f[1].contains("at 1 client") && f[3] == test && f[4] == column
            })
            .unwrap_or_else(|| panic!("no {table} {test} {column}"));
        assert_eq!(f[5], "1", "the clients column: {f:?}");
        f[6].parse().unwrap()
    };
    let qps = |cell: &str, file: &str| step(cell, file)["results"]["qps"].as_f64().unwrap();
    // Two configurations: their columns, one table per client count.
    let a = qps("sqlite.default.c1", "02-point-query.json");
    let b = qps("sqlite.smallcache.c1", "02-point-query.json");
    assert_eq!(value("throughput", "point-query", "default"), a);
    assert_eq!(value("throughput", "point-query", "smallcache"), b);
    assert_eq!(
        value("throughput.relative", "point-query", "smallcache"),
        b / a
    );
    assert_eq!(value("throughput.relative", "point-query", "default"), 1.0);
    // The load's throughput is rows/s.
    let load = step("sqlite.default.c2", "01-load.json")["load"]["rows_per_s"]
        .as_f64()
        .unwrap();
    assert!(csv.contains(&format!("throughput,Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert) at 2 client(s) (higher is better),load,load,default,2,{load}")));
    // The group median of the point queries group (one test: itself).
    assert_eq!(
        value(
            "throughput.relative",
            "median of point queries",
            "smallcache"
        ),
        b / a
    );
    // Hardware efficiency comes from hw.
    let cpu = step("sqlite.default.c1", "05-update-index.json")["results"]["hw"]["cpu_us_per_op"]
        ["machine"]
        .as_f64()
        .unwrap();
    assert_eq!(
        value("cpu_us_per_op.machine", "update-index", "default"),
        cpu
    );
    // --base picks the column the ratios divide by.
    let csv_base = report(&["--format", "csv", "--base", "smallcache"]);
    assert!(csv_base.contains("throughput.relative,"));
    let f = csv_base
        .lines()
        .map(fields)
        .find(|f| {
            f[0] == "throughput.relative"
                && f[1].contains("at 1 client")
                && f[3] == "point-query"
                && f[4] == "default"
        })
        .unwrap();
    let v: f64 = f[6].parse().unwrap();
    assert_eq!(v, a / b);
    // Scaling: both client counts, with bounds at or above what was measured at 1 client.
    assert!(csv.contains("scaling,"), "no scaling table");
    let json: Value = serde_json::from_str(&report(&["--format", "json"])).unwrap();
    let tables = json.as_array().unwrap();
    let scaling = tables.iter().find(|t| t["id"] == "scaling").unwrap();
    for row in scaling["rows"].as_array().unwrap() {
        let cells = row["cells"].as_array().unwrap();
        let (tps, bound) = (cells[1].as_f64().unwrap(), cells[2].as_f64().unwrap());
        if cells[0].as_str().unwrap().starts_with('1') {
            // At the concurrency the demands were measured at, the bound is the measurement's
            // own 1 / D: within rounding of the sampled CPU time.
            assert!(bound >= tps * 0.5, "{row}");
        }
    }
    assert!(tables.iter().any(|t| t["id"] == "queueing"));
    assert!(tables.iter().any(|t| t["id"] == "stability.tps_cv"));
}

#[test]
fn unknown_base_and_missing_inputs_are_usage_errors() {
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .args(["--base", "nope"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("--base nope") && stderr.contains("default, smallcache"),
        "{stderr}"
    );
    dbsweep()
        .args(["report", "--full", "/no/such/dir"])
        .assert()
        .code(2);
}

#[test]
fn compare_calls_no_single_run_a_regression() {
    // mock-slow ran 17% slower than mock-base, one run each: the change is shown, but one run
    // a side has no run-to-run variance, so it is not significant and the gate cannot fail.
    let out = dbsweep()
        .arg("compare")
        .arg(fixture("mock-base.json"))
        .arg(fixture("mock-slow.json"))
        .args(["--fail-on-regression", "5"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("A = ") && stdout.contains("mock-base.json"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("oltp_point_select"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        row.contains("-16.8%") && row.contains("not significant") && row.contains(" 1/1 "),
        "{row}"
    );
    assert!(!stdout.contains("REGRESSION"), "{stdout}");
    assert!(stdout.contains("cannot be judged"), "{stdout}");
    // Sweep directories compare step by step.
    let out = dbsweep()
        .arg("compare")
        .arg(fixture("sweep-a"))
        .arg(fixture("sweep-a"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(stdout.matches("0.0%").count(), 20, "{stdout}");
    // The fixture against itself ran alike: no pair is said to differ.
    assert!(!stdout.contains("did not run alike"), "{stdout}");
}

#[test]
fn hdr_exports_an_interval_log() {
    let s = Scratch::new();
    let out = s.path("a.hlog");
    dbsweep()
        .arg("hdr")
        .arg(fixture("cmp-a.json"))
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    let log = std::fs::read(&out).unwrap();
    let text = String::from_utf8_lossy(&log).to_string();
    assert!(
        text.contains("#[StartTime: ") && text.contains("nanoseconds"),
        "{text}"
    );
    let histograms: Vec<_> =
        hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&log)
            .filter_map(|e| match e {
                Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) => Some(h),
                _ => None,
            })
            .collect();
    assert_eq!(histograms.len(), 1);
    let r = read_json(&fixture("cmp-a.json"));
    let mut d = hdrhistogram::serialization::Deserializer::new();
    let bytes = base64_decode(histograms[0].encoded_histogram());
    let h: hdrhistogram::Histogram<u64> = d.deserialize(&mut bytes.as_slice()).unwrap();
    assert_eq!(h.len(), r["events"].as_u64().unwrap());
    // A sweep step works too.
    dbsweep()
        .arg("hdr")
        .arg(fixture(
            "sweep-a/steps/sqlite.default.c1/02-point-query.json",
        ))
        .assert()
        .success();
    // The load has no latency histogram.
    dbsweep()
        .arg("hdr")
        .arg(fixture("sweep-a/steps/sqlite.default.c1/01-load.json"))
        .assert()
        .code(2);
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// Headless Chromium opens the HTML report: the charts are there and drawn.
#[test]
fn html_report_renders_its_charts_in_a_browser() {
    let s = Scratch::new();
    let html = s.path("report.html");
    dbsweep()
        .args(["report", "--full"])
        .arg(fixture("sweep-a"))
        .args(["--format", "html", "--output"])
        .arg(&html)
        .assert()
        .success();
    let chromium = chromium();
    let url = format!("file://{}", html.display());
    let common = CHROMIUM_FLAGS;
    let dom = Command::new(chromium)
        .args(common)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(dom.status.success());
    let dom = String::from_utf8_lossy(&dom.stdout);
    // sweep-a: 2 slices (1 and 2 clients) of relative bars, then for each of its 4 workloads
    // a scaling chart, a per-second chart and a latency chart.
    assert_eq!(
        dom.matches("<svg").count(),
        2 + 3 * 4,
        "svg elements in the rendered page"
    );
    assert!(dom.contains("<polyline") && dom.contains("<rect"));
    let png = s.path("shot.png");
    let shot = Command::new(chromium)
        .args(common)
        .arg("--window-size=1280,2000")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let (w, h) = (info.width as usize, info.height as usize);
    // Coloured pixels (bars, lines, markers), counted in the top and the bottom half of the
    // shot: the charts were drawn, not just their frames.
    let coloured = |rows: std::ops::Range<usize>| {
        rows.flat_map(|y| (0..w).map(move |x| (y * w + x) * channels))
            .filter(|&i| {
                let (r, g, b) = (buf[i] as i32, buf[i + 1] as i32, buf[i + 2] as i32);
                (r - g).abs() > 60 || (g - b).abs() > 60 || (r - b).abs() > 60
            })
            .count()
    };
    let top = coloured(0..h / 2);
    let bottom = coloured(h / 2..h);
    assert!(
        top > 2000 && bottom > 500,
        "coloured pixels: top {top}, bottom {bottom}"
    );
}

/// Headless Chromium as the tests start it (as root, without the network it would look for).
const CHROMIUM_FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The Chromium binary; the test fails without one (scripts/test installs Debian's).
fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("no Chromium: install the Debian package chromium (scripts/test does)")
}

/// Measures the laid-out page in the browser: appended to a report, it lists every chart text
/// that reaches outside its chart (clipped) or is laid over another text of the chart, and
/// each legend entry's colours, in a `<pre id="layout">` that `--dump-dom` prints.
const LAYOUT_PROBE: &str = r#"<script>
(() => {
  const out = { charts: 0, texts: 0, outside: [], overlaps: [], legend: {} };
  const inside = (r, b) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5 &&
    r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
  const apart = (a, b) => a.right <= b.left + 1 || b.right <= a.left + 1 ||
    a.bottom <= b.top + 1 || b.bottom <= a.top + 1;
  for (const svg of document.querySelectorAll('svg')) {
    out.charts++;
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')]
      .map(t => [t.textContent, t.getBoundingClientRect()])
      .filter(([s, r]) => s.trim() !== '' && r.width > 0);
    out.texts += texts.length;
    for (const [s, r] of texts) if (!inside(r, box)) out.outside.push(s);
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (!apart(texts[i][1], texts[j][1])) out.overlaps.push(texts[i][0] + ' / ' + texts[j][0]);
    for (const t of svg.querySelectorAll('text.legend')) {
      const sw = t.previousElementSibling;
      const c = sw.tagName === 'line' ? sw.getAttribute('stroke') : sw.getAttribute('fill');
      const name = t.textContent.replace(/ bound( \(.*\))?$/, '');
      const seen = out.legend[name] || (out.legend[name] = []);
      if (!seen.includes(c)) seen.push(c);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// The report at `html` laid out by Chromium and measured by [`LAYOUT_PROBE`].
fn laid_out(s: &Scratch, html: &Path) -> Value {
    let page = std::fs::read_to_string(html).unwrap();
    let at = page.rfind("</body>").expect("a closing body tag");
    let probed = s.path("probed.html");
    std::fs::write(
        &probed,
        format!("{}{LAYOUT_PROBE}{}", &page[..at], &page[at..]),
    )
    .unwrap();
    let profile = s.path("chromium-profile");
    let out = Command::new(chromium())
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1280,1000")
        .arg("--dump-dom")
        .arg(format!("file://{}", probed.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let open = "<pre id=\"layout\">";
    let start = dom.find(open).expect("the probe ran") + open.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// Two configurations, one with a long name, at two client counts: every chart of the summary
/// and of the full page keeps its titles, ticks and legends whole and apart, and each
/// configuration has one colour in every chart.
#[test]
fn html_charts_keep_every_text_whole_and_one_colour_per_target_in_a_browser() {
    let s = Scratch::new();
    let long = "innodb-buffer-pool-one-eighth-of-the-data";
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "layout"
clients = [1, 2]
table_size = 2000
read_time = 0.5
write_time = 0.5

[configs.default]
[configs.{long}]
settings = {{ cache_size = "-64" }}

[[steps]]
load = true

[[steps]]
name = "point-query"
workload = "oltp_point_select"
class = "read"

[[steps]]
name = "update-index-with-a-long-name"
workload = "oltp_update_index"
class = "write"
"#
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    crate::util::Line::sweep(&[], &plan, &dir)
        .assert()
        .success();
    for (page, args) in [("summary", &[][..]), ("full", &["--full"][..])] {
        let html = s.path(&format!("{page}.html"));
        dbsweep()
            .arg("report")
            .arg(&dir)
            .args(args)
            .args(["--format", "html", "--output"])
            .arg(&html)
            .assert()
            .success();
        let m = laid_out(&s, &html);
        assert!(m["charts"].as_u64().unwrap() >= 1, "{page}: {m}");
        assert!(m["texts"].as_u64().unwrap() > 10, "{page}: {m}");
        assert_eq!(m["outside"], serde_json::json!([]), "{page}: texts clipped");
        assert_eq!(
            m["overlaps"],
            serde_json::json!([]),
            "{page}: texts laid over each other"
        );
        let legend = m["legend"].as_object().unwrap();
        let long_entries: Vec<&String> = legend.keys().filter(|k| k.contains(long)).collect();
        assert!(
            !long_entries.is_empty(),
            "{page}: no legend names {long}: {m}"
        );
        let mut colours = std::collections::BTreeMap::new();
        for (name, seen) in legend {
            let seen = seen.as_array().unwrap();
            assert_eq!(seen.len(), 1, "{page}: {name} drawn in {seen:?}");
            let target = if name.contains(long) { long } else { "default" };
            let c = seen[0].as_str().unwrap().to_string();
            assert_eq!(
                colours.entry(target).or_insert_with(|| c.clone()),
                &c,
                "{page}: {name}'s colour differs from its target's other charts"
            );
        }
        let distinct: std::collections::BTreeSet<&String> = colours.values().collect();
        assert_eq!(
            distinct.len(),
            colours.len(),
            "{page}: two targets share a colour"
        );
    }
}

/// The line of `test` in the table titled `title` of a text report.
pub(crate) fn text_row<'a>(text: &'a str, title: &str, test: &str) -> &'a str {
    let at = text
        .find(title)
        .unwrap_or_else(|| panic!("no table {title}"));
    text[at..]
        .lines()
        .find(|l| l.starts_with(test))
        .unwrap_or_else(|| panic!("no row {test} under {title}"))
}

/// The sweep-a fixture run three times: every cell copied as its repeats 2 and 3, with the
/// same figures (so that each ratio's interval is the ratio itself).
fn repeated_fixture(s: &Scratch) -> PathBuf {
    let copy = fixture_copy(s);
    let steps = copy.join("steps");
    let cells: Vec<PathBuf> = std::fs::read_dir(&steps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    for cell in cells {
        for repeat in [2, 3] {
            let to = steps.join(format!(
                "{}.r{repeat}",
                cell.file_name().unwrap().to_str().unwrap()
            ));
            std::fs::create_dir(&to).unwrap();
            for f in std::fs::read_dir(&cell).unwrap().flatten() {
                let mut rec = read_json(&f.path());
                rec["repeat"] = repeat.into();
                std::fs::write(to.join(f.file_name()), rec.to_string()).unwrap();
            }
        }
    }
    copy
}

/// With repeats whose throughput differs, each point of a scaling chart carries a bar from
/// the lowest to the highest of its runs; one run a point, no bar.
#[test]
fn scaling_points_of_repeated_runs_carry_their_range() {
    let s = Scratch::new();
    let single = report_of(&fixture("sweep-a"), &["--format", "html"]);
    assert!(!single.contains("class=\"spread\""));
    let dir = repeated_fixture(&s);
    // Repeat 2 of the point queries, in every cell, 30% faster than the others.
    for cell in std::fs::read_dir(dir.join("steps")).unwrap().flatten() {
        if !cell.file_name().to_str().unwrap().ends_with(".r2") {
            continue;
        }
        let file = cell.path().join("02-point-query.json");
        let mut rec = read_json(&file);
        let tps = rec["results"]["tps"].as_f64().unwrap();
        rec["results"]["tps"] = (tps * 1.3).into();
        std::fs::write(&file, rec.to_string()).unwrap();
    }
    let html = report_of(&dir, &["--format", "html"]);
    assert!(html.contains("its bar spans the lowest to the highest of them"));
    let svg = chart(&html, "point-query: scaling");
    // Two configurations at two client counts: four points, four bars.
    assert_eq!(svg.matches("class=\"spread\"").count(), 4, "{svg}");
    // The bar runs from the median (the unchanged runs) up to the faster repeat: not flat.
    let d = svg
        .split("class=\"spread\" d=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let ys: Vec<f64> = d
        .split('M')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split(',')
                .nth(1)
                .unwrap()
                .split(['h', 'V'])
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(ys[0] < ys[2] - 1.0, "{d}");
    assert!(!chart(&html, "range-covered-pk: scaling").contains("class=\"spread\""));
}

fn report_of(dir: &Path, args: &[&str]) -> String {
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(dir)
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn established_differences_colour_less_cpu_per_op_green_and_more_throughput_green() {
    // In the fixture, smallcache needs 0.56x the client CPU per point query of default (better)
    // and runs 1.79x its throughput (better); at 2 clients it needs 1.39x the client CPU per
    // range query (worse). Repeated, each ratio's interval leaves out 1: a difference.
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    let text = report_of(&dir, &["--color", "always"]);
    let green = "\x1b[32m";
    let red = "\x1b[31m";
    let cpu1 = "Efficiency, client CPU us/op, relative to default at 1 client(s) (lower is better)";
    let cpu2 = "Efficiency, client CPU us/op, relative to default at 2 client(s) (lower is better)";
    let tput = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to default at 1 client(s) (higher is better)";
    let painted = |row: &str, code: &str, value: &str| {
        row.split(code)
            .nth(1)
            .is_some_and(|s| s.trim_start().starts_with(value))
    };
    assert!(painted(text_row(&text, cpu1, "point-query"), green, "0.56"));
    assert!(painted(
        text_row(&text, cpu2, "range-covered-pk"),
        red,
        "1.39"
    ));
    assert!(painted(text_row(&text, tput, "point-query"), green, "1.79"));
    // The group's median carries an interval too, and is coloured as its members.
    assert!(painted(
        text_row(&text, cpu1, "median of point queries"),
        green,
        "0.56 [0.56, 0.56]"
    ));
    let html = report_of(&dir, &["--format", "html"]);
    let table = |title: &str| {
        let at = html.find(&format!(">{title}</h3>")).unwrap();
        let end = html[at..].find("</table>").unwrap();
        html[at..at + end].to_string()
    };
    assert!(table(cpu1).contains("<td class=\"better\">0.56 [0.56, 0.56]</td>"));
    assert!(table(cpu2).contains("<td class=\"worse\">1.39 [1.39, 1.39]</td>"));
    assert!(table(tput).contains("<td class=\"better\">1.79 [1.79, 1.79]</td>"));
}

#[test]
fn single_runs_colour_no_ratio_and_say_why() {
    // The same 0.56x, 1.39x and 1.79x of one run a side: no colour, in any table, and a note.
    let text = report(&["--color", "always"]);
    assert!(
        !text.contains("\x1b[32m") && !text.contains("\x1b[31m"),
        "a single run's ratio is coloured"
    );
    assert!(
        text.contains("single runs: no ratio is coloured"),
        "no note says why"
    );
    let html = report(&["--format", "html"]);
    assert!(!html.contains("class=\"better\"") && !html.contains("class=\"worse\""));
}

/// Repeats that disagree: smallcache's second run has default's figures, so each of its
/// ratios runs from about 0.56 (or 1.79) to 1.00 over the repeats. No test and no group median
/// is then an established difference, and none is coloured, though the medians are far from 1.
#[test]
fn a_median_without_an_established_difference_is_not_coloured() {
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    let steps = dir.join("steps");
    for clients in [1, 2] {
        let to = steps.join(format!("sqlite.smallcache.c{clients}.r2"));
        std::fs::remove_dir_all(&to).unwrap();
        std::fs::create_dir(&to).unwrap();
        let from = steps.join(format!("sqlite.default.c{clients}"));
        for f in std::fs::read_dir(&from).unwrap().flatten() {
            let mut rec = read_json(&f.path());
            rec["repeat"] = 2.into();
            rec["config"] = "smallcache".into();
            rec["cell"] = format!("sqlite.smallcache.c{clients}").into();
            std::fs::write(to.join(f.file_name()), rec.to_string()).unwrap();
        }
    }
    let text = report_of(&dir, &["--color", "always"]);
    assert!(
        !text.contains("\x1b[32m") && !text.contains("\x1b[31m"),
        "a difference the repeats do not establish is coloured"
    );
    let tput = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to default at 1 client(s) (higher is better)";
    let median = text_row(&text, tput, "median of point queries");
    assert!(median.trim_end().ends_with("1.79 [1.00, 1.79]"), "{median}");
}

/// `compare DIR --a default --b smallcache`, which succeeds: its output.
fn compare_columns(dir: &Path) -> String {
    let out = dbsweep()
        .arg("compare")
        .arg(dir)
        .args(["--a", "default", "--b", "smallcache"])
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).to_string()
}

/// Sets the throughput of every run of `test` in the cells of `config` (at 1 client) to the
/// fixture's times the factor of its repeat.
fn scale_runs(dir: &Path, config: &str, test: &str, factors: [f64; 3]) -> f64 {
    let mut base = 0.0;
    for (i, f) in factors.iter().enumerate() {
        let cell = match i {
            0 => format!("sqlite.{config}.c1"),
            n => format!("sqlite.{config}.c1.r{}", n + 1),
        };
        let file = std::fs::read_dir(dir.join("steps").join(cell))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| read_json(p)["name"] == test)
            .unwrap();
        let mut rec = read_json(&file);
        base = rec["results"]["qps"].as_f64().unwrap();
        rec["results"]["qps"] = (base * f).into();
        std::fs::write(&file, rec.to_string()).unwrap();
    }
    base
}

/// With three runs a side, compare gives the Hodges-Lehmann change and the range of the nine
/// ratios (90% for 3 against 3), calls a change whose interval leaves out 0% a difference and
/// gates on it, and calls one whose interval holds 0% noise.
#[test]
fn compare_on_repeats_gives_the_change_with_its_interval() {
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    let spread = [1.0, 1.02, 0.98];
    let a = scale_runs(&dir, "default", "point-query", spread);
    let b = scale_runs(&dir, "smallcache", "point-query", spread);
    let out = dbsweep()
        .arg("compare")
        .arg(&dir)
        .args([
            "--a",
            "default",
            "--b",
            "smallcache",
            "--fail-on-regression",
            "5",
        ])
        .assert()
        .code(1); // range-covered-pk at 2 clients: 28% slower in every run
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let row = stdout
        .lines()
        .find(|l| l.starts_with("point-query ") && l.contains(" c1 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let pct = |r: f64| format!("{:+.1}", (r - 1.0) * 100.0);
    let (lo, hi) = (b / a * 0.98 / 1.02, b / a * 1.02 / 0.98);
    assert!(
        row.contains(&format!("{}% [{}, {}] 90%", pct(b / a), pct(lo), pct(hi)))
            && row.contains(" 3/3 ")
            && row.contains("improvement"),
        "{row}"
    );
    assert!(
        stdout.contains("1 significant regression(s) worse than 5%: range-covered-pk (sqlite c2)"),
        "{stdout}"
    );
    // Runs that spread more than the change: noise, not a difference.
    let s2 = Scratch::new();
    let dir = repeated_fixture(&s2);
    scale_runs(&dir, "default", "point-query", [1.0, 1.0, 1.0]);
    let ratio = b / a;
    scale_runs(
        &dir,
        "smallcache",
        "point-query",
        [1.0, 1.0 / ratio, 1.05 / ratio],
    );
    let stdout = compare_columns(&dir);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("point-query ") && l.contains(" c1 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(row.contains("noise"), "{row}");
}

/// Steps paired by name that ran at another place in their plan, or with other options, are
/// compared and said to differ.
#[test]
fn compare_says_when_a_pair_did_not_run_alike() {
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    let file = copy.join("steps/sqlite.default.c1/02-point-query.json");
    let mut rec = read_json(&file);
    rec["index"] = 7.into();
    rec["results"]["options"]["table_size"] = 30000.into();
    std::fs::write(&file, rec.to_string()).unwrap();
    let out = dbsweep()
        .arg("compare")
        .arg(fixture("sweep-a"))
        .arg(&copy)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("Warning: 1 pair(s) did not run alike")
            && stdout.contains(
                "point-query (sqlite/default c1): step 2 in A, 7 in B, table_size 20000 in A, 30000 in B"
            ),
        "{stdout}"
    );
}

/// Repeats of one cell that disagree by more than a fifth are named under a warning; repeats
/// that agree are not.
#[test]
fn repeats_that_disagree_are_warned_of() {
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    let title = "Warning: repeated runs of a cell disagree";
    assert!(!report_of(&dir, &[]).contains(title));
    let q = scale_runs(&dir, "default", "point-query", [1.0, 1.5, 1.0]);
    let text = report_of(&dir, &[]);
    let row = text_row(&text, title, "point-query (sqlite/default c1)");
    assert!(
        row.contains(&format!("r2 {:.0}", q * 1.5)) && row.contains("50%"),
        "{row}"
    );
}

/// `report DIR` alone is the one-page summary: the machine, throughput relative by group
/// (the groups' medians, not every test), efficiency per event relative, the warnings by
/// name; every table stays one `--full` away.
#[test]
fn the_default_report_is_a_one_page_summary() {
    let out = dbsweep()
        .args(["report", "--color", "never"])
        .arg(fixture("sweep-a"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.lines().count() < 120, "{} lines", text.lines().count());
    for part in [
        "Machine (each sweep's environment.json)",
        "relative to default at 1 client(s) (higher is better), by group",
        "relative to default at 2 client(s) (higher is better), by group",
        "Efficiency per event, relative to default at 1 client(s)",
        "Warnings",
    ] {
        assert!(text.contains(part), "no {part} in\n{text}");
    }
    // The group's median is there, and its single test is named beside it.
    let row = text_row(
        &text,
        "relative to default at 1 client(s) (higher is better), by group",
        "point queries (point-query)",
    );
    assert!(row.trim_end().ends_with("1.79"), "{row}");
    // The full report's per-test tables are not.
    assert!(
        !text.contains("Efficiency, client CPU us/op at 1 client(s)"),
        "{text}"
    );
    let efficiency = text_row(
        &text,
        "Efficiency per event, relative to default at 1 client(s)",
        "client CPU us/op",
    );
    assert!(efficiency.contains("1.00"), "{efficiency}");
    // A warning of the full report is named in the summary.
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    scale_runs(&dir, "default", "point-query", [1.0, 1.5, 1.0]);
    let out = dbsweep().arg("report").arg(&dir).assert().success();
    let summary = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        summary.contains("repeated runs of a cell disagree (1 row(s))"),
        "{summary}"
    );
    assert!(report(&["--full"]).contains("Efficiency, client CPU us/op at 1 client(s)"));
    // In HTML too: the by-group chart and the summary's tables, not the full page's charts.
    let out = dbsweep()
        .args(["report", "--format", "html"])
        .arg(fixture("sweep-a"))
        .assert()
        .success();
    let html = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let by_group = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to default at 1 client(s) (higher is better), by group";
    assert!(chart(&html, by_group).contains(">smallcache</text>"));
    assert!(
        html.contains("Efficiency per event") && !html.contains("Latency percentiles"),
        "{html}"
    );
    assert!(report(&["--format", "html"]).contains("Latency percentiles"));
}

/// The relative chart: wide enough for its title and its legend, one colour per column (the
/// legend's), an axis from 0 with round ticks that holds every ratio, each bar's value printed,
/// and no better/worse fill for a single run's ratio.
#[test]
fn the_relative_chart_keeps_its_title_legend_and_colours() {
    let html = report(&["--format", "html"]);
    let title = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to default at 1 client(s) (higher is better)";
    let svg = chart(&html, title);
    let width: f64 = svg
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(width >= title.len() as f64 * 7.0, "width {width}");
    let legend = svg
        .split("<text class=\"legend\"")
        .nth(1)
        .unwrap_or_else(|| panic!("no legend in {svg}"));
    assert!(legend.contains(">smallcache</text>"), "{legend}");
    // The legend's swatch colour is the bars' colour.
    let swatch = svg
        .rsplit("<rect x=")
        .next()
        .and_then(|r| r.split("fill=\"").nth(1))
        .and_then(|f| f.split('"').next())
        .unwrap();
    let bars = svg.matches(&format!("fill=\"{swatch}\"")).count();
    assert!(bars >= 6, "{bars} bars of the legend's colour {swatch}");
    assert!(
        !svg.contains("#2ca02c") && !svg.contains("#d62728"),
        "{svg}"
    );
    assert!(!svg.contains("2.0+"), "{svg}");
    // The full page opens with its contents, each entry a link to an anchored heading.
    let nav = html
        .split("<nav class=\"contents\">")
        .nth(1)
        .and_then(|n| n.split("</nav>").next())
        .unwrap_or_else(|| panic!("no contents"));
    let link = format!(">{title}</a>");
    let anchor = nav
        .split("<a href=\"#")
        .find(|a| a.contains(&link))
        .and_then(|a| a.split('"').next())
        .unwrap_or_else(|| panic!("{title} not in the contents: {nav}"));
    assert!(html.contains(&format!("id=\"{anchor}\">{title}</h3>")));
    // Ticks from 0 past the largest ratio (1.79 for the point query), round.
    assert!(
        svg.contains(">0</text>") && svg.contains(">2.00</text>"),
        "{svg}"
    );
    assert!(svg.contains(">1.79</text>"), "the bar's value: {svg}");
    // The per-second charts are in the tables' unit.
    assert!(chart(&html, "point-query: per second").contains(">queries/s<"));
}

/// The fixture's two configurations given server versions: `smallcache` 9.7.4, `default`
/// `default_version`.
fn with_versions(s: &Scratch, default_version: &str) -> PathBuf {
    let copy = fixture_copy(s);
    for cell in std::fs::read_dir(copy.join("steps")).unwrap().flatten() {
        let name = cell.file_name().to_str().unwrap().to_string();
        for f in std::fs::read_dir(cell.path()).unwrap().flatten() {
            let mut rec = read_json(&f.path());
            if rec["results"].is_object() {
                rec["results"]["target"]["version"] = if name.contains("smallcache") {
                    "9.7.4".into()
                } else {
                    default_version.into()
                };
            }
            std::fs::write(f.path(), rec.to_string()).unwrap();
        }
    }
    copy
}

/// A version study divides by its oldest version, but only within one product: MariaDB 10.11
/// against MySQL 9.7 keeps its first column as the base.
#[test]
fn the_oldest_version_is_the_base_only_within_one_product() {
    let title = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to";
    let s = Scratch::new();
    let one_product = report_of(&with_versions(&s, "10.11.19"), &[]);
    assert!(
        one_product.contains(&format!("{title} smallcache at 1 client(s)")),
        "9.7.4 is the oldest of one product"
    );
    let s2 = Scratch::new();
    let forks = report_of(&with_versions(&s2, "10.11.19-MariaDB-0+deb12u1"), &[]);
    assert!(
        forks.contains(&format!("{title} default at 1 client(s)")),
        "MariaDB and MySQL: the first column"
    );
}

/// A copy of the sweep-a fixture in `s`, to alter.
pub(crate) fn fixture_copy(s: &Scratch) -> PathBuf {
    let copy = s.path("sweep");
    let status = Command::new("cp")
        .arg("-r")
        .arg(fixture("sweep-a"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

/// The SVG of the chart titled `title` in an HTML report.
fn chart<'a>(html: &'a str, title: &str) -> &'a str {
    let at = html
        .find(&format!("font-weight=\"bold\">{title}</text>"))
        .unwrap_or_else(|| panic!("no chart {title}"));
    let start = html[..at].rfind("<svg").unwrap();
    let end = at + html[at..].find("</svg>").unwrap();
    &html[start..end]
}

#[test]
fn a_partial_last_interval_is_no_point_of_the_per_second_chart() {
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    let html_of = |dir: &Path| {
        let out = dbsweep()
            .args(["report", "--full"])
            .arg(dir)
            .args(["--format", "html"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let before = html_of(&copy);
    // The run ends 8.9 ms into a new interval that saw 2 events: 225 per second.
    let path = copy.join("steps/sqlite.default.c1/02-point-query.json");
    let mut rec = read_json(&path);
    let intervals = rec["results"]["intervals"].as_array_mut().unwrap();
    let mut sliver = intervals.last().unwrap().clone();
    sliver["t"] = (sliver["t"].as_f64().unwrap() + 0.0089).into();
    sliver["seconds"] = 0.0089.into();
    sliver["events"] = 2.into();
    sliver["tps"] = 225.0.into();
    intervals.push(sliver);
    std::fs::write(&path, rec.to_string()).unwrap();
    let after = html_of(&copy);
    let title = "point-query: per second";
    assert_eq!(chart(&before, title), chart(&after, title));
}

#[test]
fn no_real_measurement_breaks_its_bound_and_a_made_up_one_is_flagged() {
    let text = report(&[]);
    assert!(text.contains("Scaling of sqlite/default"), "{text}");
    assert!(!text.contains("model error"), "{text}");
    assert!(!report(&["--format", "html"]).contains("model-error"));
    // Ten times the measured throughput at 2 clients: beyond any bound of the same demands.
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    let path = copy.join("steps/sqlite.default.c2/02-point-query.json");
    let mut rec = read_json(&path);
    let tps = rec["results"]["tps"].as_f64().unwrap();
    rec["results"]["tps"] = (tps * 10.0).into();
    std::fs::write(&path, rec.to_string()).unwrap();
    let run = |format: &str| {
        let out = dbsweep()
            .args(["report", "--full"])
            .arg(&copy)
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run("text");
    let row = text_row(&text, "Scaling of sqlite/default", "point-query        2");
    assert!(row.contains("tps above its bound: model error"), "{row}");
    let html = run("html");
    let svg = chart(&html, "point-query: scaling");
    assert_eq!(svg.matches("class=\"model-error\"").count(), 1, "{svg}");
    // Each configuration's bound (dashed) is drawn in its configuration's colour.
    let strokes: Vec<&str> = svg
        .split("<polyline")
        .skip(1)
        .map(|p| {
            p.split("stroke=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        strokes.len(),
        4,
        "two configurations, each a line and a bound"
    );
    assert_eq!(strokes[0], strokes[1]);
    assert_eq!(strokes[2], strokes[3]);
    assert_ne!(strokes[0], strokes[2]);
}

/// (x, label) of each axis tick of a chart.
fn ticks(svg: &str) -> Vec<(f64, String)> {
    svg.split("<text class=\"tick\" x=\"")
        .skip(1)
        .map(|t| {
            let x = t.split('"').next().unwrap().parse().unwrap();
            let label = t.split('>').nth(1).unwrap().split('<').next().unwrap();
            (x, label.to_string())
        })
        .collect()
}

#[test]
fn chart_axes_tick_whole_clients_round_seconds_and_hdr_percentiles() {
    let html = report(&["--format", "html"]);
    let latency = ticks(chart(&html, "point-query: latency"));
    let labels: Vec<&str> = latency.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(labels, ["p50", "p90", "p99", "p99.9"]);
    // 1 / (1 - p): p90, p99 and p99.9 stand equally far apart.
    let (a, b, c) = (latency[1].0, latency[2].0, latency[3].0);
    assert!(((b - a) - (c - b)).abs() < 0.5, "{latency:?}");
    let scaling = ticks(chart(&html, "point-query: scaling"));
    assert!(!scaling.is_empty());
    assert!(
        scaling.iter().all(|(_, l)| l.parse::<u32>().is_ok()),
        "{scaling:?}"
    );
    let seconds = ticks(chart(&html, "point-query: per second"));
    assert!(
        seconds
            .iter()
            .all(|(_, l)| l.split('.').nth(1).is_none_or(|d| d.len() <= 1)),
        "{seconds:?}"
    );
}

/// Issue 18: an embedded SQLite point query takes about 5 us; in milliseconds with two
/// decimals that is `0.00`. Each column takes the unit its figures need and names it.
#[test]
fn sub_millisecond_latencies_are_shown_in_microseconds() {
    let text = report(&[]);
    let scaling = "Scaling of sqlite/default";
    let at = text.find(scaling).expect("scaling table");
    let header = text[at..].lines().find(|l| l.starts_with("test")).unwrap();
    assert!(
        header.contains("avg us") && header.contains("p95 us"),
        "{header}"
    );
    let row = text_row(&text, scaling, "point-query ");
    let avg: f64 = row.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!((1.0..100.0).contains(&avg), "{row}");
}

/// Issue 18: compare two configurations of one sweep, and step records as `hdr` reads them;
/// say what could not be paired.
#[test]
fn compare_takes_two_columns_of_one_sweep_and_step_records_and_lists_what_it_skipped() {
    let out = dbsweep()
        .arg("compare")
        .arg(fixture("sweep-a"))
        .args(["--a", "default", "--b", "smallcache"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let report = report(&["--format", "csv"]);
    // The point query at 1 client: the report's two throughputs are the compare's A and B.
    let row = stdout
        .lines()
        .find(|l| l.starts_with("point-query ") && l.contains(" c1 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let fields: Vec<&str> = row.split_whitespace().collect();
    let (a, b): (f64, f64) = (fields[3].parse().unwrap(), fields[4].parse().unwrap());
    let shown = |config: &str| -> f64 {
        report
            .lines()
            .find(|l| {
                l.starts_with("throughput,")
                    && l.contains("at 1 client(s)")
                    && l.contains(&format!(",point-query,{config},"))
            })
            .unwrap_or_else(|| panic!("no {config} row in\n{report}"))
            .rsplit(',')
            .nth(2) // value,lo,hi
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!((a - shown("default")).abs() < 1.0, "{row}");
    assert!((b - shown("smallcache")).abs() < 1.0, "{row}");
    assert!(!stdout.contains("not compared"), "{stdout}");
    // The steps only one configuration ran are listed, not dropped in silence.
    let s = Scratch::new();
    let copy = fixture_copy(&s);
    std::fs::remove_file(copy.join("steps/sqlite.smallcache.c2/05-update-index.json")).unwrap();
    let stdout = compare_columns(&copy);
    assert!(
        stdout.contains("not compared (1): 1 only in A: update-index (sqlite/default c2)"),
        "{stdout}"
    );
    // Step records compare as results files do.
    let steps = fixture("sweep-a/steps");
    let out = dbsweep()
        .arg("compare")
        .arg(steps.join("sqlite.default.c1/02-point-query.json"))
        .arg(steps.join("sqlite.smallcache.c1/02-point-query.json"))
        .args(["--a", "default", "--b", "smallcache"])
        .assert()
        .success();
    let one = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(one.lines().any(|l| l.starts_with("point-query ")), "{one}");
    // One input needs both columns; an unknown column names the ones there are.
    dbsweep()
        .arg("compare")
        .arg(fixture("sweep-a"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--a and --b"));
    dbsweep()
        .arg("compare")
        .arg(fixture("sweep-a"))
        .args(["--a", "nope", "--b", "default"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--a nope: no such target or configuration; the columns are sqlite/default, sqlite/smallcache",
        ));
}

/// A run of the repeated fixture marked as measured on a busy machine: the report lists it in
/// its warnings and colours no ratio (nor group median) built on it, though the repeats
/// establish the difference; compare shows the change, calls it not significant and says why.
#[test]
fn a_ratio_built_on_a_busy_machines_run_is_not_called_a_difference() {
    let s = Scratch::new();
    let dir = repeated_fixture(&s);
    let cell = dir.join("steps").join("sqlite.smallcache.c1.r2");
    let file = std::fs::read_dir(&cell)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| read_json(p)["name"] == "point-query")
        .unwrap();
    let mut rec = read_json(&file);
    rec["results"]["hw"]["beside"] =
        serde_json::json!({"others_pct": 48.0, "steal_pct": 0.0, "busy": true});
    std::fs::write(&file, rec.to_string()).unwrap();
    let text = report_of(&dir, &["--color", "always"]);
    let tput = "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to default at 1 client(s) (higher is better)";
    let row = text_row(&text, tput, "point-query");
    assert!(row.contains("1.79") && !row.contains("\x1b[32m"), "{row}");
    let median = text_row(&text, tput, "median of point queries");
    assert!(!median.contains("\x1b[32m"), "{median}");
    // Another test of the same runs, on no busy machine, is still a difference.
    let cpu2 = "Efficiency, client CPU us/op, relative to default at 2 client(s) (lower is better)";
    assert!(text_row(&text, cpu2, "range-covered-pk").contains("\x1b[31m"));
    assert!(
        text.contains("steps measured on a busy machine")
            && text.contains("other processes 48% of the CPUs, steal 0%"),
        "{text}"
    );
    let out = dbsweep()
        .arg("compare")
        .arg(&dir)
        .args(["--a", "default", "--b", "smallcache"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("point-query ") && l.contains(" c1 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        row.contains("busy machine") && !row.contains("improvement"),
        "{row}\n{stdout}"
    );
    assert!(
        stdout.contains("B run 2 measured on a busy machine (other processes 48% of the CPUs"),
        "{stdout}"
    );
}
