//! sysbench's `fileio` test (to come in this file).
use super::help::Opt;
use super::{Limits, Values};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};
pub const OPTIONS: &[Opt] = &[];
pub fn prepare(_v: &Values, _s: &SysbenchStyle) -> Result<Outcome, Error> { super::fatal("fileio") }
pub fn cleanup(_v: &Values, _s: &SysbenchStyle) -> Result<Outcome, Error> { super::fatal("fileio") }
pub fn run(_v: &Values, _l: &Limits, _s: &SysbenchStyle) -> Result<Outcome, Error> { super::fatal("fileio") }
