//! For the fuzz harness (`fuzz/`): a results file's text and a histogram's bytes through what
//! report and merge do with them. Not part of dbsweep's interface.

use std::path::Path;

use base64::Engine;

use super::schema::{HISTOGRAM_ENCODING, Results, parse_json};
use super::{HistogramData, Latency};

/// For the fuzz harness (`fuzz/`): `text` read as a results file is, and then what report and
/// merge do with one: its checks, its histograms, a merge with a copy of itself shifted to
/// another host. Not part of dbsweep's interface.
#[doc(hidden)]
pub fn fuzz_results_text(text: &str) {
    let Ok(r) = parse_json::<Results>(Path::new("fuzz.json"), text, "results file") else {
        return;
    };
    if r.check().is_err() {
        return;
    }
    let _ = r.histogram.decode();
    for s in &r.statements {
        let _ = s.histogram.as_ref().map(HistogramData::decode);
    }
    let mut other = r.clone();
    other.client_id = Some("fuzz-other".into());
    let _ = super::merge::merge(&[("a.json".into(), r), ("b.json".into(), other)]);
}

/// For the fuzz harness: `bytes` decoded as a histogram's data.
#[doc(hidden)]
pub fn fuzz_histogram_bytes(bytes: &[u8]) {
    let data = HistogramData {
        encoding: HISTOGRAM_ENCODING.into(),
        unit: "ns".into(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    };
    if let Ok(h) = data.decode() {
        let _ = Latency::from_histogram(&h);
    }
}
