//! The options of sysbench's workloads and the microbenchmarks on its tables (sysbench's names
//! and defaults): on the command line under their heading, in a plan by the same names, in the
//! results file's options beside the shared ones.

use crate::input::parse_bool;

/// The heading `--help` gives these options (and the shared sbtest ones beside them).
pub const HEADING: &str = "sysbench and microbenchmark workloads";

#[derive(Clone, Debug, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct SysbenchArgs {
    /// Rows of range selects
    #[arg(help_heading = HEADING, long, default_value_t = 100)]
    pub range_size: u64,
    /// No BEGIN/COMMIT: every statement in autocommit
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub skip_trx: bool,
    /// Enable the range selects
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub range_selects: bool,
    /// Point selects per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 10)]
    pub point_selects: u32,
    /// Simple range selects per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub simple_ranges: u32,
    /// SUM() range selects per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub sum_ranges: u32,
    /// ORDER BY range selects per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub order_ranges: u32,
    /// DISTINCT range selects per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub distinct_ranges: u32,
    /// Index updates per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub index_updates: u32,
    /// Non-index updates per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub non_index_updates: u32,
    /// DELETE/INSERT pairs per transaction
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub delete_inserts: u32,
    /// Database-generated ids for inserts (off: client-generated)
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub auto_inc: bool,
    /// Create the secondary index k_N after loading
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub create_secondary: bool,
    /// Make id a plain index instead of the primary key
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub secondary: bool,
    /// Values in IN () lists and rows of covered ranges (default 10 for select_random_points,
    /// 100 for the extended microbenchmarks)
    #[arg(help_heading = HEADING, long)]
    pub random_points: Option<u32>,
    /// oltp_inlist_select: always the same ids (from table_size/2+1)
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub hot_points: bool,
    /// oltp_points_covered, oltp_range_covered: select only indexed columns (index-only reads)
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub covered: bool,
    /// oltp_points_covered, oltp_range_covered: look up by id (off: by the secondary index k)
    #[arg(help_heading = HEADING, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub on_id: bool,
    /// select_random_ranges: ranges per query
    #[arg(help_heading = HEADING, long, default_value_t = 10)]
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each range
    #[arg(help_heading = HEADING, long, default_value_t = 5)]
    pub delta: u64,
    /// MySQL storage engine of created tables
    #[arg(help_heading = HEADING, long, default_value = "innodb")]
    pub mysql_storage_engine: String,
}

impl Default for SysbenchArgs {
    fn default() -> SysbenchArgs {
        crate::input::clap_defaults()
    }
}

/// Largest IN () list or OR-ed range count the workloads accept.
const MAX_LIST: u32 = 1000;

impl crate::workload::FamilyOptions for SysbenchArgs {
    fn check(&self, _rate: f64) -> Result<(), crate::error::Error> {
        let bad = |option: &str, why: String| {
            Err(crate::error::Error::Option {
                option: option.into(),
                why,
            })
        };
        if self.range_size == 0 {
            return bad("range-size", "must be at least 1".into());
        }
        for (name, v) in [
            ("random-points", self.random_points.unwrap_or(1)),
            ("number-of-ranges", self.number_of_ranges),
        ] {
            if v == 0 || v > MAX_LIST {
                return bad(name, format!("{v} must be between 1 and {MAX_LIST}"));
            }
        }
        Ok(())
    }
}
