//! The commands that read results files and sweep directories: report, compare, merge, hdr.

use std::path::{Path, PathBuf};

use crate::cli::{CompareOpts, HdrOpts, MergeOpts, ReportOpts};
use crate::error::{Error, Outcome};
use crate::report;
use crate::results::{self, Results, ResultsFile};

pub(super) fn report(o: &ReportOpts) -> Result<Outcome, Error> {
    use std::io::IsTerminal;
    let color = match o.color.as_str() {
        "always" => true,
        "never" => false,
        _ => o.output.is_none() && std::io::stdout().is_terminal(),
    };
    if let Some(out) = &o.output {
        let inputs: Vec<&Path> = o.inputs.iter().map(PathBuf::as_path).collect();
        results::check_output_apart(out, &inputs)?;
    }
    let text = report::report(&o.inputs, o.base.as_deref(), o.format, color, o.full)?;
    report::emit(&text, o.output.as_deref())?;
    Ok(Outcome::Done)
}

pub(super) fn compare(o: &CompareOpts) -> Result<Outcome, Error> {
    if let Some(p) = o.fail_on_regression
        && !(p.is_finite() && p >= 0.0)
    {
        return Err(Error::Usage(format!(
            "--fail-on-regression {p}: give a percentage of 0 or more"
        )));
    }
    let (text, failed) = report::compare(
        &o.first,
        o.second.as_deref(),
        o.column_a.as_deref(),
        o.column_b.as_deref(),
        o.fail_on_regression,
    )?;
    print!("{}", crate::error::escape_controls(&text, true));
    Ok(if failed {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

pub(super) fn merge(o: &MergeOpts) -> Result<Outcome, Error> {
    let inputs: Vec<&Path> = o.inputs.iter().map(PathBuf::as_path).collect();
    results::check_output_apart(&o.output, &inputs)?;
    let files = o
        .inputs
        .iter()
        .map(|p| Ok((p.display().to_string(), Results::read(p)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let out = ResultsFile::create_results(&o.output)?;
    let (merged, warnings) = results::merge::merge(&files).map_err(Error::Usage)?;
    for w in warnings {
        eprintln!("warning: {}", crate::error::escape_controls(&w, false));
    }
    out.commit(&merged)?;
    eprintln!(
        "merged {} parts: {} events, {:.2} tps, p99 {:.3} ms; written to {}",
        files.len(),
        merged.events,
        merged.tps,
        merged.latency_ms.p99,
        o.output.display()
    );
    Ok(Outcome::Done)
}

pub(super) fn hdr(o: &HdrOpts) -> Result<Outcome, Error> {
    if let Some(out) = &o.output {
        results::check_output_apart(out, &[&o.input])?;
    }
    let log = report::hdr_log(&o.input)?;
    match &o.output {
        Some(path) => ResultsFile::create(path)?.commit_bytes(&log)?,
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(&log)
                .map_err(|e| Error::Run(format!("writing to stdout: {e}")))?;
        }
    }
    Ok(Outcome::Done)
}
