//! Reports and comparisons: the tables of a dataset, where they are written, the HDR log of a results file.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use super::model::Dataset;
use crate::error::Error;
use crate::results::{Results, StepRecord};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    Html,
    /// The runs as change-point tools read a series: a row per run (build, test, client count,
    /// repeat, time), then its metrics.
    SeriesCsv,
    /// The same rows as JSON objects.
    SeriesJson,
}

/// Every table of the report, in order: warnings, the machine, comparisons, scaling with its
/// bounds, stability.
pub fn tables_of(ds: &Dataset, base: Option<&str>) -> Result<Vec<super::tables::Table>, Error> {
    // Warnings first, then the machine the inputs ran on.
    // A family's runs may lead with the figures its users read first (pgbench's).
    let mut out: Vec<super::tables::Table> = crate::workload::families::lead_tables(ds);
    out.extend(super::checks::inputs_table(ds));
    out.extend(super::checks::settings_table(ds));
    out.extend(super::checks::durability_table(ds));
    out.extend(super::checks::busy_table(ds));
    out.extend(super::checks::machine_table(ds));
    out.extend(super::checks::frequency_table(ds));
    out.extend(super::checks::connections_table(ds));
    out.extend(super::checks::spread_table(ds));
    out.extend(super::absolute::build(ds, base)?);
    out.extend(super::changes::tables(ds));
    out.extend(super::scaling::tables(ds));
    out.extend(super::bound::tables(ds));
    out.extend(crate::workload::families::report_tables(ds, base)?);
    out.extend(super::statements::tables(ds));
    out.extend(super::profile::tables(ds));
    out.extend(super::roles::tables(ds));
    out.extend(super::phases::tables(ds));
    out.extend(super::capacity::tables(ds));
    out.extend(super::recovery::tables(ds));
    out.extend(super::waits::tables(ds));
    out.extend(super::stability::stability(ds));
    out.iter_mut().for_each(super::tables::choose_time_units);
    Ok(out)
}

/// Renders the report of `inputs` in `format`: in text, markdown and HTML the one-page
/// summary unless `full`; every table otherwise (CSV and JSON, or `full`).
pub fn report(
    inputs: &[PathBuf],
    base: Option<&str>,
    format: Format,
    color: bool,
    full: bool,
) -> Result<String, Error> {
    let ds = Dataset::read(inputs, crate::workload::families::throughput)?;
    match format {
        Format::SeriesCsv => return Ok(super::series_out::series_csv(&ds)),
        Format::SeriesJson => return Ok(super::series_out::series_json(&ds)),
        _ => {}
    }
    let mut tables = tables_of(&ds, base)?;
    let summarised = !full && matches!(format, Format::Text | Format::Markdown | Format::Html);
    if summarised {
        tables = super::summary::tables(&ds, &tables, base)?;
        tables.iter_mut().for_each(super::tables::choose_time_units);
    }
    Ok(match format {
        Format::Text => super::render::text(&tables, color),
        Format::Markdown => super::render::markdown(&tables),
        Format::Csv => super::render::csv(&tables),
        Format::Json => super::render::json(&tables),
        Format::SeriesCsv | Format::SeriesJson => unreachable!("answered above"),
        Format::Html => {
            let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
            if summarised {
                return Ok(super::html::summary_page(
                    &ds,
                    &tables,
                    base,
                    &format!("dbsweep summary: {}", names.join(", ")),
                ));
            }
            super::html::page(
                &ds,
                &tables,
                base,
                &format!("dbsweep report: {}", names.join(", ")),
            )
        }
    })
}

/// Writes `text` to `output` atomically, or to stdout.
pub fn emit(text: &str, output: Option<&Path>) -> Result<(), Error> {
    match output {
        None => {
            // Names come from results files: nothing in them may steer the terminal.
            print!("{}", crate::error::escape_controls(text, true));
            Ok(())
        }
        Some(path) => {
            let tmp = crate::results::ResultsFile::create(path)?;
            tmp.commit_bytes(text.as_bytes())
        }
    }
}

/// `dbsweep compare`: the text, and whether a significant regression beyond `fail_pct` fails.
pub fn compare(
    a: &Path,
    b: Option<&Path>,
    column_a: Option<&str>,
    column_b: Option<&str>,
    fail_pct: Option<f64>,
) -> Result<(String, bool), Error> {
    if b.is_none() && (column_a.is_none() || column_b.is_none()) {
        return Err(Error::Usage(format!(
            "compare {}: with one input, name the two columns to compare with --a and --b (targets or configurations)",
            a.display()
        )));
    }
    let da = Dataset::read(&[a], crate::workload::families::throughput)?;
    let db = match b {
        Some(b) => Dataset::read(&[b], crate::workload::families::throughput)?,
        None => Dataset::read(&[a], crate::workload::families::throughput)?,
    };
    let sa = column_a
        .map(|c| super::compare::Column::parse(c, &da, "--a"))
        .transpose()?;
    let sb = column_b
        .map(|c| super::compare::Column::parse(c, &db, "--b"))
        .transpose()?;
    let name = |p: &Path, c: Option<&str>| match c {
        Some(c) => format!("{} {c}", p.display()),
        None => p.display().to_string(),
    };
    let (a_name, b_name) = (name(a, column_a), name(b.unwrap_or(a), column_b));
    let outcome = super::compare::compare(&da, &db, sa.as_ref(), sb.as_ref());
    if outcome.rows.is_empty() {
        return Err(Error::Usage(format!(
            "{a_name} and {b_name} have no test in common (same step name and clients, and target and configuration unless --a/--b choose them): {}",
            outcome.skipped.join("; ")
        )));
    }
    let mut text = super::compare::text(&outcome.rows, &a_name, &b_name);
    text.push_str(&super::compare::skipped_text(&outcome.skipped));
    let failed = match fail_pct {
        Some(pct) => {
            let unjudged = outcome.rows.iter().filter(|r| r.interval.is_none()).count();
            if unjudged > 0 {
                text.push_str(&format!(
                    "\n--fail-on-regression {pct}: {unjudged} test(s) with one run a side cannot be judged (no run-to-run variance); give repeats to gate on them\n"
                ));
            }
            let bad = super::compare::regressions(&outcome.rows, pct);
            if !bad.is_empty() {
                text.push_str(&format!(
                    "\n{} significant regression(s) worse than {pct}%: {}\n",
                    bad.len(),
                    bad.iter()
                        .map(|r| format!("{} ({})", r.test, r.place))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            !bad.is_empty()
        }
        None => false,
    };
    Ok((text, failed))
}

/// `dbsweep hdr`: a results file's (or step record's) latency histogram as an HDR histogram
/// log with one interval: the measured part of the step. Values are nanoseconds.
pub fn hdr_log(input: &Path) -> Result<Vec<u8>, Error> {
    let results = match Results::read(input) {
        Ok(r) => r,
        // A results file with impossible figures, or no JSON at all, says so; JSON of another
        // shape may be a step record, and when it is not either, the results file's error
        // is the one that tells.
        Err(e) if !e.to_string().contains("not a dbsweep results file") => return Err(e),
        Err(e) => match StepRecord::read(input) {
            Ok(rec) => rec.results.ok_or_else(|| {
                Error::Usage(format!(
                    "{}: this step has no latency histogram (not a run step)",
                    input.display()
                ))
            })?,
            Err(_) => return Err(e),
        },
    };
    let h = results.histogram.decode()?;
    let start = UNIX_EPOCH + Duration::from_secs(results.started_at);
    let mut out = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "dbsweep {}: {} on {} ({} thread(s)); latency per event in nanoseconds",
            results.tool.version, results.workload, results.target.url, results.threads
        ))
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6)
        .begin_log_with(&mut out, &mut ser)
        .map_err(|e| Error::Run(format!("writing the HDR log: {e}")))?;
    let tag = Tag::new(&results.workload);
    log.write_histogram(
        &h,
        Duration::from_secs_f64(results.warmup_s),
        Duration::from_secs_f64(results.time_s),
        tag,
    )
    .map_err(|e| Error::Run(format!("writing the HDR log: {e:?}")))?;
    drop(log);
    Ok(out)
}
