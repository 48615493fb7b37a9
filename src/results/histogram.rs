//! A run's latency histogram in the results file: HDR's V2 deflate encoding in base64, and
//! its reading back, which never allocates what a crafted header asks for.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use super::HISTOGRAM_ENCODING;
use crate::error::Error;

/// Latencies are recorded in nanoseconds, from 1 ns to one hour, at 3 significant digits.
pub const HIST_MAX_NS: u64 = 3_600_000_000_000;
const HIST_SIGFIGS: u8 = 3;

/// A histogram of latencies as every recorder keeps them.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, HIST_SIGFIGS).expect("static histogram bounds")
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistogramData {
    pub encoding: String,
    pub unit: String,
    pub data: String,
}

impl HistogramData {
    pub fn encode(h: &Histogram<u64>) -> HistogramData {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(h, &mut bytes)
            .expect("serialising to memory");
        HistogramData {
            encoding: HISTOGRAM_ENCODING.into(),
            unit: "ns".into(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    pub fn decode(&self) -> Result<Histogram<u64>, Error> {
        let bad = |why: String| Error::Usage(format!("results file: histogram: {why}"));
        if self.encoding != HISTOGRAM_ENCODING {
            return Err(bad(format!("unknown encoding '{}'", self.encoding)));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|e| bad(format!("its data is not base64 ({e})")))?;
        let plain = histogram_blob(&bytes).map_err(bad)?;
        Deserializer::new()
            .deserialize(&mut plain.as_slice())
            .map_err(|e| bad(format!("its counts do not decode ({e:?})")))
    }
}

/// The counts a histogram may hold after inflating: far more than any run records (a count
/// takes at most 9 bytes; a histogram of 3 significant digits over an hour in ns has about
/// 40,000 of them), far less than memory.
const HISTOGRAM_INFLATED_MAX: u64 = 64 << 20;

/// The highest value a histogram may track: four times what the recorder tracks (an hour).
const HIGHEST_TRACKABLE: u64 = 4 * HIST_MAX_NS;

/// The uncompressed V2 encoding of a V2-deflate histogram, after checking what its header
/// claims against what it holds, so that the decoder never allocates what a crafted header
/// asks for (a 4 GB payload in a 28 KB file).
fn histogram_blob(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    const V2: u32 = 0x1c84_9303;
    const V2_DEFLATE: u32 = 0x1c84_9304;
    let u32_at = |b: &[u8], i: usize| -> Option<u32> {
        Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?))
    };
    let cookie = u32_at(bytes, 0).ok_or("too short to be one")?;
    // Writers set bit 4 of the cookie (the Java and Rust ones do); readers take both.
    let plain = match cookie & !0x10 {
        V2 => bytes.to_vec(),
        V2_DEFLATE => {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
                .take(HISTOGRAM_INFLATED_MAX + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("its compressed data is damaged ({e})"))?;
            if out.len() as u64 > HISTOGRAM_INFLATED_MAX {
                return Err(format!(
                    "it inflates past {} MiB: not a run's histogram",
                    HISTOGRAM_INFLATED_MAX >> 20
                ));
            }
            out
        }
        other => {
            return Err(format!(
                "not an HdrHistogram V2 encoding (cookie {other:#x})"
            ));
        }
    };
    // The V2 header: cookie, payload length, normalising offset, significant digits, lowest
    // and highest values, conversion ratio (40 bytes), then the payload.
    const HEADER: usize = 40;
    let claimed = u32_at(&plain, 4).ok_or("its header is cut short")? as usize;
    let held = plain.len().saturating_sub(HEADER);
    if plain.len() < HEADER || claimed != held {
        return Err(format!(
            "its header claims {claimed} bytes of counts but it holds {held}"
        ));
    }
    let digits = u32_at(&plain, 12).unwrap_or(0);
    if digits > 5 {
        return Err(format!(
            "{digits} significant digits (HdrHistogram takes 0 to 5)"
        ));
    }
    // dbsweep writes 3 digits up to an hour in nanoseconds (about 70,000 counts); a crafted
    // header asking 5 digits up to 2^63 makes each histogram millions of counts, and a merge
    // of a thousand of them minutes of work.
    let highest = u32_at(&plain, 24)
        .zip(u32_at(&plain, 28))
        .map_or(0, |(hi, lo)| (u64::from(hi) << 32) | u64::from(lo));
    if digits > 3 || highest > HIGHEST_TRACKABLE {
        return Err(format!(
            "{digits} significant digits up to {highest}: not a run's histogram (3 digits, up to {HIGHEST_TRACKABLE} ns)"
        ));
    }
    Ok(plain)
}
