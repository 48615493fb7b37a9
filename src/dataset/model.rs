//! What reports read: sweep directories (their step records) and single results files, turned
//! into entries keyed by test and column.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::Error;
use crate::results::figures::HwFigures;
use crate::results::{Results, StepRecord};

/// The four groups of docs/workloads.md section 5, in report order, after the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Load,
    PointQueries,
    RangeQueries,
    RangeAggregation,
    Writes,
    /// A benchmark's mix of reads and writes that is mostly reads (LinkBench's operations).
    Mixes,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Group::Load => "load",
            Group::PointQueries => "point queries",
            Group::RangeQueries => "range queries without aggregation",
            Group::RangeAggregation => "range queries with aggregation",
            Group::Writes => "writes",
            Group::Mixes => "mixes of reads and writes",
        }
    }

    /// The group of a workload: point lookups; IN-lists, ranges and scans returning rows;
    /// read-only transactions and counts (aggregation); everything that writes.
    /// A sysbench script counts as the built-in workload of its file's name
    /// (`/usr/share/sysbench/oltp_point_select.lua` as `oltp_point_select`).
    pub fn of(workload: &str) -> Group {
        let name = workload.rsplit('/').next().unwrap_or(workload);
        match name.strip_suffix(".lua").unwrap_or(name) {
            "oltp_point_select" | "oltp_points_covered" => Group::PointQueries,
            "oltp_inlist_select"
            | "select_random_points"
            | "select_random_ranges"
            | "oltp_range_covered"
            | "oltp_scan" => Group::RangeQueries,
            "oltp_read_only" | "oltp_read_only_count" => Group::RangeAggregation,
            // Seven in ten of its operations read: not "writes".
            "linkbench" | "linkbench_synthetic" => Group::Mixes,
            _ => Group::Writes,
        }
    }
}

/// Where an entry ran: the input it came from and its cell.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    pub source: String,
    pub target: String,
    pub config: String,
    pub clients: u32,
}

impl Place {
    /// What a column of the comparison is, whatever the client count: input, target,
    /// configuration.
    pub fn column(&self) -> (&str, &str, &str) {
        (&self.source, &self.target, &self.config)
    }
}

/// One measured test in one place.
#[derive(Clone, Debug)]
pub struct Entry {
    pub place: Place,
    pub test: String,
    /// Position in its plan, to order the tests.
    pub order: usize,
    pub group: Group,
    pub results: Option<Results>,
    /// A load's rows/s and hardware figures (per row).
    pub load_rows_per_s: Option<f64>,
    /// The rows a load wrote (its figures are per row).
    pub load_rows: Option<u64>,
    pub load_hw: Option<HwFigures>,
    /// Which run of a repeated cell (1 for a cell run once).
    pub repeat: u32,
    /// The run's throughput in its family's own unit, where the family has one (the figure
    /// [`Dataset::read`] is given).
    pub family_figure: Option<f64>,
}

impl Entry {
    /// The report's throughput: rows/s for loads and scans, NOPM (committed New-Orders per
    /// minute) for TPC-C, operations/s for LinkBench, a family's own unit where it has one
    /// (`family_figure`: transactions/s for pgbench's scripts), queries/s otherwise.
    pub fn throughput(&self) -> Option<f64> {
        if let Some(r) = self.load_rows_per_s {
            return Some(r);
        }
        let r = self.results.as_ref()?;
        Some(if let Some(t) = &r.tpcc {
            t.nopm
        } else if r.workload == "oltp_scan" {
            r.rows_per_s
        } else if crate::results::times_operations(&r.workload) {
            // LinkBench's operations.
            r.tps
        } else if let Some(own) = self.family_figure {
            // A family's own unit (rows inserted a second, for one).
            own
        } else {
            r.qps
        })
    }

    /// The operations its per-operation figures divide by: a load's rows, a run's events.
    pub fn ops(&self) -> Option<f64> {
        match (self.load_rows, &self.results) {
            (Some(rows), _) => Some(rows as f64),
            (None, Some(r)) => Some(r.events as f64),
            _ => None,
        }
    }

    pub fn hw(&self) -> Option<&HwFigures> {
        self.load_hw
            .as_ref()
            .or_else(|| self.results.as_ref()?.hw.as_ref())
    }
}

/// Every entry of the inputs.
#[derive(Debug, Default)]
pub struct Dataset {
    pub entries: Vec<Entry>,
    /// The crash-recovery steps, which are no entries (their throughput stops at the crash).
    pub recoveries: Vec<Recovered>,
    /// Each sweep directory's `environment.json` (the machine it ran on), by source.
    pub machines: Vec<(String, serde_json::Value)>,
    /// The entries of each place, in their order: the tables ask by column, and a scan of
    /// every entry for every column made a report over a long series quadratic in its builds.
    by_place: std::collections::HashMap<Place, Vec<usize>>,
    /// How many distinct sources, targets and configurations the places have.
    distinct: (usize, usize, usize),
}

/// A crash-recovery step of a cell.
#[derive(Clone, Debug)]
pub struct Recovered {
    pub place: Place,
    pub step: String,
    pub recovery: crate::results::Recovery,
}

/// A short label for an input: its directory or file name.
fn label_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string());
    name.strip_suffix(".json")
        .map_or(name.clone(), str::to_string)
}

/// A single run's test name: the workload with the options that tell its variants apart.
fn test_name(r: &Results) -> String {
    let o = &r.options;
    let get = |k: &str| {
        o.get(k)
            .map(|v| v.to_string().trim_matches('"').to_string())
    };
    let mut name = r.workload.clone();
    match r.workload.as_str() {
        "oltp_read_only" | "oltp_read_write" => {
            if let Some(v) = get("range_size") {
                name.push_str(&format!(".range{v}"));
            }
        }
        "oltp_inlist_select" | "oltp_inlist_update" | "select_random_points" => {
            if let Some(v) = get("random_points").filter(|v| v != "null") {
                name.push_str(&format!(".points{v}"));
            }
            if get("hot_points").as_deref() == Some("true") {
                name.push_str(".hot");
            }
        }
        "oltp_points_covered" | "oltp_range_covered" => {
            let covered = get("covered").as_deref() == Some("true");
            let on_id = get("on_id").as_deref() == Some("true");
            name.push_str(if covered { ".covered" } else { ".notcovered" });
            name.push_str(if on_id { "-pk" } else { "-si" });
        }
        _ => {}
    }
    name
}

impl Dataset {
    /// Reads every input: a sweep directory (its reported, finished steps) or a results file.
    /// `family_figure` is a run's throughput in its family's own unit, where it has one (the
    /// workload families' registry knows them; the dataset is below the families).
    pub fn read(
        inputs: &[impl AsRef<Path>],
        family_figure: fn(&Results) -> Option<f64>,
    ) -> Result<Dataset, Error> {
        let mut entries = Vec::new();
        let mut machines = Vec::new();
        let mut recoveries = Vec::new();
        let labels: Vec<String> = inputs.iter().map(|p| label_of(p.as_ref())).collect();
        let unique: BTreeSet<&String> = labels.iter().collect();
        for (i, input) in inputs.iter().enumerate() {
            let path = input.as_ref();
            // Two inputs with the same name (a/run.json, b/run.json) are told apart by number.
            let source = if unique.len() == labels.len() {
                labels[i].clone()
            } else {
                format!("{}#{}", labels[i], i + 1)
            };
            if path.is_dir() {
                read_sweep(path, &source, &mut entries, &mut recoveries)?;
                // The machine it ran on; a sweep without one (or an unreadable one) just has
                // no column in the machine table.
                if let Some(env) =
                    crate::input::read_text(&path.join("environment.json"), crate::input::SMALL)
                        .ok()
                        .and_then(|t| serde_json::from_str(&t).ok())
                {
                    machines.push((source.clone(), env));
                }
            } else if path.is_file() {
                let mut r = match Results::read(path) {
                    Ok(r) => r,
                    // A step record of a sweep (as `hdr` takes them) is one entry of its cell.
                    Err(e) if e.to_string().contains("not a dbsweep results file") => {
                        // A file that is neither says why as the kind it looks like: a run's
                        // results file (merge's output among them) has a `tool`.
                        let mut rec = StepRecord::read(path).map_err(|step| {
                            if crate::results::names_a_tool(path) {
                                e
                            } else {
                                step
                            }
                        })?;
                        locate_profile(rec.results.as_mut(), path);
                        let before = entries.len() + recoveries.len();
                        push_record(rec, &source, &mut entries, &mut recoveries);
                        if entries.len() + recoveries.len() == before {
                            return Err(Error::Usage(format!(
                                "{}: this step has no figures to report (not a finished, reported run or load)",
                                path.display()
                            )));
                        }
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                locate_profile(Some(&mut r), path);
                entries.push(Entry {
                    place: Place {
                        source: source.clone(),
                        target: r.target.kind.clone(),
                        config: "default".into(),
                        clients: r.threads,
                    },
                    test: test_name(&r),
                    order: 0,
                    group: Group::of(&r.workload),
                    results: Some(r),
                    load_rows_per_s: None,
                    load_rows: None,
                    load_hw: None,
                    repeat: 1,
                    family_figure: None,
                });
            } else {
                return Err(Error::Usage(format!(
                    "{}: no such file or directory (give sweep directories, results files or step records)",
                    path.display()
                )));
            }
        }
        if entries.is_empty() {
            return Err(Error::Usage(
                "nothing to report: the inputs hold no finished steps".into(),
            ));
        }
        let mut by_place: std::collections::HashMap<Place, Vec<usize>> =
            std::collections::HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_place.entry(e.place.clone()).or_default().push(i);
        }
        let count = |f: fn(&Place) -> &str| {
            by_place
                .keys()
                .map(f)
                .collect::<std::collections::HashSet<_>>()
                .len()
        };
        let distinct = (
            count(|p| &p.source),
            count(|p| &p.target),
            count(|p| &p.config),
        );
        for e in &mut entries {
            e.family_figure = e.results.as_ref().and_then(family_figure);
        }
        Ok(Dataset {
            entries,
            recoveries,
            machines,
            by_place,
            distinct,
        })
    }

    /// How many distinct sources, targets and configurations the entries ran at.
    pub fn distinct(&self) -> (usize, usize, usize) {
        self.distinct
    }

    /// The entries at any of `places`, in the order of [`Dataset::entries`].
    pub fn at<'a>(&'a self, places: &[Place]) -> impl Iterator<Item = &'a Entry> + 'a {
        let mut idx: Vec<usize> = places
            .iter()
            .filter_map(|p| self.by_place.get(p))
            .flatten()
            .copied()
            .collect();
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter().map(|i| &self.entries[i])
    }
}

fn read_sweep(
    dir: &Path,
    source: &str,
    out: &mut Vec<Entry>,
    recoveries: &mut Vec<Recovered>,
) -> Result<(), Error> {
    let steps = dir.join("steps");
    if !steps.is_dir() {
        return Err(Error::Usage(format!(
            "{}: not a sweep directory (no steps/)",
            dir.display()
        )));
    }
    let mut files = Vec::new();
    for cell in
        std::fs::read_dir(&steps).map_err(|e| Error::Usage(format!("{}: {e}", steps.display())))?
    {
        let cell = cell.map_err(|e| Error::Usage(e.to_string()))?.path();
        if !cell.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&cell)
            .map_err(|e| Error::Usage(format!("{}: {e}", cell.display())))?
        {
            let f = f.map_err(|e| Error::Usage(e.to_string()))?.path();
            if f.extension().is_some_and(|e| e == "json") {
                files.push(f);
            }
        }
    }
    files.sort();
    for f in files {
        let mut rec = StepRecord::read(&f)?;
        locate_profile(rec.results.as_mut(), &f);
        push_record(rec, source, out, recoveries);
    }
    Ok(())
}

/// Makes a profile's file names (beside `file`, which holds the results) paths that open from
/// here.
fn locate_profile(results: Option<&mut Results>, file: &Path) {
    let Some(p) = results.and_then(|r| r.profile.as_mut()) else {
        return;
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    for slot in [&mut p.stacks_file, &mut p.flame_file] {
        // A plain file name beside the results, as dbsweep writes it; anything else is not
        // followed.
        *slot = slot
            .take()
            .filter(|n| !n.contains('/') && !n.starts_with('.'))
            .map(|n| dir.join(n).display().to_string());
    }
}

/// A finished, reported step as an entry (others are not figures to report).
fn push_record(
    rec: StepRecord,
    source: &str,
    out: &mut Vec<Entry>,
    recoveries: &mut Vec<Recovered>,
) {
    let place = Place {
        source: source.to_string(),
        target: rec.target.clone(),
        config: rec.config.clone(),
        clients: rec.clients,
    };
    if let (Some(r), "ok") = (&rec.recovery, rec.status.as_str()) {
        recoveries.push(Recovered {
            place: place.clone(),
            step: rec.name.clone(),
            recovery: r.clone(),
        });
    }
    if !rec.reported || rec.status != "ok" {
        return;
    }
    let group = match (&rec.results, &rec.load) {
        (Some(r), _) => Group::of(&r.workload),
        (None, Some(_)) => Group::Load,
        _ => return,
    };
    out.push(Entry {
        place,
        test: rec.name.clone(),
        order: rec.index,
        group,
        load_rows_per_s: rec.load.as_ref().map(|l| l.rows_per_s),
        load_rows: rec.load.as_ref().map(|l| l.rows),
        load_hw: rec.load_hw.clone(),
        results: rec.results,
        repeat: rec.repeat,
        family_figure: None,
    });
}

/// The parts of a place that tell it apart in `ds` (its source, target and configuration,
/// leaving out those that are the same everywhere), joined by `/`; with `config`, the
/// configuration is named even when there is only one.
pub fn place_label(ds: &Dataset, p: &Place, config: bool) -> String {
    let (sources, targets, configs) = ds.distinct();
    let mut parts = Vec::new();
    if sources > 1 {
        parts.push(p.source.as_str());
    }
    if targets > 1 {
        parts.push(p.target.as_str());
    }
    if config || configs > 1 {
        parts.push(p.config.as_str());
    }
    parts.join("/")
}

/// The version number in a server's version string: `PostgreSQL 13.23 on x86_64...` and
/// `11.4.5-MariaDB` give `13.23` and `11.4.5`.
pub fn short_version(v: &str) -> Option<String> {
    v.split(|c: char| c.is_whitespace() || c == '-')
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(|w| {
            w.chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
                .trim_end_matches('.')
                .to_string()
        })
}

/// " on PLACE (DBMS VERSION)" of entry `e`: the DBMS and its version, which a report of one
/// results file names nowhere else.
pub fn on_dbms(ds: &Dataset, e: &Entry, r: &crate::results::Results) -> String {
    let at = place_label(ds, &e.place, false);
    let dbms = match short_version(&r.target.version) {
        Some(v) if r.target.version.contains("MariaDB") => format!("MariaDB {v}"),
        Some(v) if r.target.kind == "mysql" => format!("MySQL {v}"),
        Some(v) if r.target.kind == "postgres" => format!("PostgreSQL {v}"),
        Some(v) if r.target.kind == "sqlite" => format!("SQLite {v}"),
        Some(v) => format!("{} {v}", r.target.kind),
        None => r.target.kind.clone(),
    };
    if at.is_empty() {
        format!(" on {dbms}")
    } else {
        format!(" on {at} ({dbms})")
    }
}

#[cfg(test)]
mod tests {
    use super::Group;

    #[test]
    fn linkbench_is_a_mix_not_writes() {
        assert_eq!(Group::of("linkbench").title(), "mixes of reads and writes");
        assert_eq!(Group::of("oltp_update_index"), Group::Writes);
    }
}
