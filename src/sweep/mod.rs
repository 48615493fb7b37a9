//! `dbsweep sweep`: runs a plan's steps for every target x configuration x client count (a
//! "cell": a fresh managed server, or a fresh SQLite file), writing one record per step as it
//! ends, so that a crash loses at most the step that was running and `--resume` goes on from
//! there.
//!
//! A sweep directory holds `plan.toml` (the resolved plan), `environment.json`, and
//! `steps/CELL/NN-NAME.json` for every step; with `limits = true`, `limits.json` too.

mod cell;
mod crash;
mod detect;
mod driver;
mod durability;
mod env;
pub mod hosts;
mod limits;
mod pause;
mod progress;
mod run;
mod step;
pub use driver::run;
