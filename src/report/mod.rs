//! Reports: results files and sweep directories turned into tables (absolute, relative,
//! hardware efficiency, scaling with queueing bounds, stability), charts (HTML with inline
//! SVG), comparisons of two runs, and HDR histogram logs. Reports read only results files.

pub use crate::dataset::{model, stats, tables};

mod absolute;
mod autopsy;
pub mod bound;
mod capacity;
mod changes;
mod charts;
mod checks;
pub mod compare;
mod entry;
pub mod html;
mod phases;
mod profile;
pub mod queue;
mod recovery;
pub mod render;
mod roles;
pub mod scaling;
mod series_chart;
mod series_out;
pub mod stability;
mod statements;
mod summary;
mod waits;
pub use entry::{Format, compare, emit, hdr_log, report, tables_of};
