//! The run's options judged one by one: values in their ranges, the random generator's, the
//! observers' (samplers, profiles, server metrics) and the sizes of what is loaded.

use super::MAX_SECONDS;
use crate::cli::RunArgs;
use crate::error::Error;

pub(super) fn bad(option: &str, why: impl std::fmt::Display) -> Error {
    Error::Option {
        option: option.to_string(),
        why: why.to_string(),
    }
}

pub(super) fn check_non_negative(option: &str, v: f64) -> Result<(), Error> {
    if v.is_finite() && (0.0..=MAX_SECONDS).contains(&v) {
        Ok(())
    } else {
        Err(bad(
            option,
            format!("{v} must be a number from 0 to {MAX_SECONDS} (a year of seconds)"),
        ))
    }
}

/// A node_exporter endpoint: an http or https URL with a host.
pub fn check_metrics_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| {
            format!(
                "'{}' is not an http:// or https:// URL (node_exporter's is http://HOST:9100/metrics)",
                crate::db::redact_url(url)
            )
        })?;
    if rest.is_empty() || rest.starts_with('/') || url.chars().any(char::is_whitespace) {
        return Err(format!(
            "'{}' has no host (node_exporter's is http://HOST:9100/metrics)",
            crate::db::redact_url(url)
        ));
    }
    Ok(())
}

/// The values of a run's options, each in its range, and the options that do not go together:
/// sizes and times here, then the generator, the observers and TPC-C's.
pub(super) fn check_values(o: &RunArgs) -> Result<(), Error> {
    if o.tables == 0 {
        return Err(bad("tables", "must be at least 1"));
    }
    if o.table_size == 0 || o.table_size > i32::MAX as u64 {
        return Err(bad(
            "table-size",
            format!("{} must be between 1 and {}", o.table_size, i32::MAX),
        ));
    }
    for (name, v) in [
        ("time", o.time),
        ("warmup", o.warmup),
        ("report-interval", o.report_interval),
        ("reconnect-timeout", o.reconnect_timeout),
        ("latency-limit", o.latency_limit),
    ] {
        check_non_negative(name, v)?;
    }
    // A rate gives each client a gap of threads/rate seconds; an interval, a tick.
    if !(o.rate == 0.0 || (o.rate.is_finite() && (0.001..=1e9).contains(&o.rate))) {
        return Err(bad(
            "rate",
            format!(
                "{} must be 0 (no limit) or from 0.001 to 1e9 events/s",
                o.rate
            ),
        ));
    }
    if o.report_interval > 0.0 && o.report_interval < 0.01 {
        return Err(bad(
            "report-interval",
            format!(
                "{} must be 0 (no interval lines) or at least 0.01",
                o.report_interval
            ),
        ));
    }
    check_generator(o)?;
    check_observers(o)?;
    check_sizes(o)
}

/// The random generator's options (`--rand-*`), the profile's and the wait sampler's rates,
/// and the list sizes.
fn check_generator(o: &RunArgs) -> Result<(), Error> {
    if o.rand_zipfian_exp.is_nan() || o.rand_zipfian_exp <= 0.0 {
        return Err(bad(
            "rand-zipfian-exp",
            format!("{} must be above 0", o.rand_zipfian_exp),
        ));
    }
    if o.rand_pareto_h.is_nan() || o.rand_pareto_h <= 0.0 || o.rand_pareto_h >= 1.0 {
        return Err(bad(
            "rand-pareto-h",
            format!("{} must be between 0 and 1", o.rand_pareto_h),
        ));
    }
    if o.rand_spec_pct.is_nan() || o.rand_spec_pct <= 0.0 || o.rand_spec_pct > 100.0 {
        return Err(bad(
            "rand-spec-pct",
            format!("{} must be above 0 and at most 100", o.rand_spec_pct),
        ));
    }
    if !(1..=5000).contains(&o.profile_hz) {
        return Err(bad(
            "profile-hz",
            format!("{} must be between 1 and 5000", o.profile_hz),
        ));
    }
    if !(0.0..=1000.0).contains(&o.wait_sample_hz) {
        return Err(bad(
            "wait-sample-hz",
            format!(
                "{} must be between 0 (no wait profile) and 1000",
                o.wait_sample_hz
            ),
        ));
    }
    if !(0.0..=100.0).contains(&o.rand_spec_res) {
        return Err(bad(
            "rand-spec-res",
            format!("{} must be between 0 and 100", o.rand_spec_res),
        ));
    }
    Ok(())
}

/// What observes a run beside it: several client hosts' start, the server host's metrics,
/// the link, the client's name.
fn check_observers(o: &RunArgs) -> Result<(), Error> {
    check_non_negative("start-tolerance", o.start_tolerance)?;
    if let Some(url) = &o.server_metrics {
        check_metrics_url(url).map_err(|e| bad("server-metrics", e))?;
    }
    if let Some(m) = o.link_speed
        && !(m.is_finite() && m > 0.0 && m <= 1e7)
    {
        return Err(bad(
            "link-speed",
            format!("{m} must be a link's speed in Mbit/s, above 0 and at most 10000000"),
        ));
    }
    if let Some(id) = &o.client_id
        && (id.is_empty()
            || id.len() > 64
            || !id
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@')))
    {
        return Err(bad(
            "client-id",
            format!("'{id}' must be 1 to 64 letters, digits, '-', '_', '.' or '@' (a host's name)"),
        ));
    }
    Ok(())
}

/// The families' own options (against the run's rate too), and the scale.
fn check_sizes(o: &RunArgs) -> Result<(), Error> {
    o.families.check(o.rate)?;
    if !(1..=100_000).contains(&o.scale) {
        return Err(bad(
            "scale",
            format!("{} must be from 1 to 100000", o.scale),
        ));
    }
    Ok(())
}
