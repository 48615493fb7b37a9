//! The terms of a capacity search (`dbsweep capacity`, a plan step's `search`): the percentile
//! and its limit, how close the answer must be, and how long a probe runs.

/// The shortest probe, seconds; and the events beyond the percentile a probe should hold.
pub const MIN_PROBE_S: f64 = 2.0;
const TAIL_EVENTS: f64 = 100.0;

/// `10ms`, `0.5ms`, `250us`, `1s`, or a number of milliseconds.
pub fn duration_ms(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (n, scale) = if let Some(n) = s.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e3)
    } else {
        (s, 1.0)
    };
    n.trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        // From 1 us (below it no latency is measured: the histograms count nanoseconds, a
        // round trip takes microseconds) to an hour.
        .filter(|v| v.is_finite() && *v >= 1e-3 && *v <= 3.6e6)
        .ok_or_else(|| format!("'{s}' is not a duration from 1us to 1h (10ms, 250us, 1s)"))
}

/// The search's terms, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    percentile: f64,
    limit_ms: f64,
    precision: f64,
    max_probes: u32,
    max_probe_s: f64,
}

impl Search {
    /// A search for the highest rate whose `percentile` stays under `limit_ms`, to
    /// `precision` (a fraction), in at most `max_probes` probes of at most `max_probe_s`.
    pub fn new(
        percentile: f64,
        limit_ms: f64,
        precision: f64,
        max_probes: u32,
        max_probe_s: f64,
    ) -> Result<Search, (&'static str, String)> {
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err((
                "percentile",
                format!("{percentile} is not between 0 and 100"),
            ));
        }
        if !(limit_ms.is_finite() && limit_ms > 0.0 && limit_ms <= 3.6e6) {
            return Err(("limit", format!("{limit_ms} ms is not a latency limit")));
        }
        if !(precision > 0.0 && precision <= 0.5) {
            return Err((
                "precision",
                format!("{} is not from 0 to 50 (%)", precision * 100.0),
            ));
        }
        if !(2..=100).contains(&max_probes) {
            return Err(("max-probes", format!("{max_probes} is not from 2 to 100")));
        }
        if !(MIN_PROBE_S..=3600.0).contains(&max_probe_s) {
            return Err((
                "max-probe-time",
                format!("{max_probe_s} is not from {MIN_PROBE_S} to 3600 seconds"),
            ));
        }
        Ok(Search {
            percentile,
            limit_ms,
            precision,
            max_probes,
            max_probe_s,
        })
    }

    /// A probe's seconds at `rate`: enough for a hundred events beyond the percentile.
    pub fn seconds(&self, rate: f64) -> f64 {
        let events = TAIL_EVENTS / (1.0 - self.percentile / 100.0);
        (events / rate).clamp(MIN_PROBE_S, self.max_probe_s)
    }

    pub fn percentile(&self) -> f64 {
        self.percentile
    }

    pub fn limit_ms(&self) -> f64 {
        self.limit_ms
    }

    pub fn precision(&self) -> f64 {
        self.precision
    }

    pub fn max_probes(&self) -> u32 {
        self.max_probes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_milliseconds() {
        assert_eq!(duration_ms("10ms"), Ok(10.0));
        assert_eq!(duration_ms("250us"), Ok(0.25));
        assert_eq!(duration_ms("1.5s"), Ok(1500.0));
        assert_eq!(duration_ms("7"), Ok(7.0));
        assert!(duration_ms("0ms").is_err());
        assert!(duration_ms("fast").is_err());
    }

    #[test]
    fn a_probe_holds_a_hundred_events_beyond_its_percentile() {
        let s = Search {
            percentile: 99.0,
            limit_ms: 10.0,
            precision: 0.05,
            max_probes: 14,
            max_probe_s: 60.0,
        };
        // 10,000 events: 10 s at 1,000/s; at least 2 s, at most 60.
        assert!((s.seconds(1000.0) - 10.0).abs() < 1e-9);
        assert_eq!(s.seconds(100_000.0), MIN_PROBE_S);
        assert_eq!(s.seconds(10.0), 60.0);
    }
}
