//! A validated, resolved plan for one command: the raw CLI options checked against each other
//! and turned into the options the workload and the runner use. Every check here runs before
//! any table is touched.

mod checks;
pub use checks::check_metrics_url;
mod run_plan;
mod script;
pub mod search;
pub mod sweep_plan;

pub use crate::results::MAX_SECONDS;
pub use run_plan::{
    MAX_CLIENTS, MAX_WORKERS, RolePlan, RunPlan, WORKERS_PER_CORE, check_pipeline, server_dialect,
    server_spec,
};
pub use script::{script_plan, script_step};
pub use search::Search;
