//! A series' runs as change-point tools (Apache Otava, Nyrkiö) read them: a row per build and
//! run, its attributes first (build, version, test, clients, repeat, start, busy), then its
//! metrics; as CSV and as JSON.

use super::absolute::HW_METRICS;
use super::model::{Dataset, Entry};
use super::tables::{layout, tests};

/// A run of the series as change-point tools read one: its attributes, then its metrics.
struct SeriesRow {
    attributes: Vec<(&'static str, String)>,
    metrics: Vec<(&'static str, Option<f64>)>,
}

/// Every run in the order the columns ran (a series' builds oldest first), tests in plan order.
fn series_rows(ds: &Dataset) -> Vec<SeriesRow> {
    let mut out = Vec::new();
    let versions = |e: &Entry| e.results.as_ref().map(|r| r.target.version.clone());
    for slice in layout(ds) {
        for (label, places) in &slice.columns {
            for (_, test) in tests(ds) {
                let mut runs: Vec<&Entry> = ds.at(places).filter(|e| e.test == test).collect();
                runs.sort_by_key(|e| e.repeat);
                for e in runs {
                    let started = e.results.as_ref().map_or(0, |r| r.started_at);
                    let mut metrics = vec![("throughput", e.throughput())];
                    metrics.push((
                        "latency_p95_ms",
                        e.results.as_ref().map(|r| r.latency_ms.p95),
                    ));
                    for (id, _, f) in HW_METRICS.iter() {
                        metrics.push((id, f(e)));
                    }
                    out.push(SeriesRow {
                        attributes: vec![
                            ("build", label.clone()),
                            ("version", versions(e).unwrap_or_default()),
                            ("test", test.clone()),
                            ("clients", e.place.clients.to_string()),
                            ("repeat", e.repeat.to_string()),
                            ("started_at", started.to_string()),
                            (
                                "busy",
                                e.hw()
                                    .and_then(|h| h.beside.as_ref())
                                    .is_some_and(|b| b.busy)
                                    .to_string(),
                            ),
                        ],
                        metrics,
                    });
                }
            }
        }
    }
    out
}

/// `report --format series-csv`: a header, then a row per run; an empty field where a run has
/// no such figure.
pub fn series_csv(ds: &Dataset) -> String {
    let rows = series_rows(ds);
    let Some(first) = rows.first() else {
        return String::new();
    };
    let quote = super::render::csv_field;
    let mut out: String = first
        .attributes
        .iter()
        .map(|(k, _)| *k)
        .chain(first.metrics.iter().map(|(k, _)| *k))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in &rows {
        let fields: Vec<String> = r
            .attributes
            .iter()
            .map(|(_, v)| quote(v))
            .chain(
                r.metrics
                    .iter()
                    .map(|(_, v)| v.map_or(String::new(), |x| x.to_string())),
            )
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// `report --format series-json`: a list of objects, `attributes` and `metrics` each a map.
pub fn series_json(ds: &Dataset) -> String {
    let rows: Vec<serde_json::Value> = series_rows(ds)
        .into_iter()
        .map(|r| {
            serde_json::json!({
                "attributes": r.attributes.into_iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v))).collect::<serde_json::Map<_, _>>(),
                "metrics": r.metrics.into_iter().filter_map(|(k, v)| Some((k.to_string(), serde_json::json!(v?)))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&rows).unwrap_or_default();
    text.push('\n');
    text
}
