//! What a person sees: the live per-interval line on stderr and the final summary on stdout,
//! laid out like sysbench's so that its users read them at a glance.

pub mod log_histogram;
pub mod note;
pub mod shape;
mod summary;
mod voice;
pub use note::{Events, Said, Warning};
pub use summary::{interval_line, summary};
pub use voice::{Printer, RunHeader, Style, Voice};
