//! The options that are absent as the command line's 0, as the results file has them.

use std::num::{NonZeroU32, NonZeroU64};

use serde::Serializer;

pub fn u32<S: Serializer>(v: &Option<NonZeroU32>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(v.map_or(0, NonZeroU32::get))
}

pub fn u64<S: Serializer>(v: &Option<NonZeroU64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(v.map_or(0, NonZeroU64::get))
}

pub fn f64<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(v.unwrap_or(0.0))
}
