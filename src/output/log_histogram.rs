//! sysbench's histogram: buckets spaced evenly on a log scale between a least and a greatest
//! value (values outside go to the end buckets), printed with each bucket's value, up to 40
//! stars against the fullest bucket and its count. Its `--histogram` report and its Lua API's
//! `sysbench.histogram` share it.

use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub struct LogHistogram {
    counts: Vec<u64>,
    ln_min: f64,
    /// Buckets per unit of ln(value).
    per_ln: f64,
}

impl LogHistogram {
    /// `buckets` buckets (at least 2) from `min` to `max` (0 < min < max).
    pub fn new(buckets: usize, min: f64, max: f64) -> Option<LogHistogram> {
        let ok = buckets >= 2 && min > 0.0 && max > min && min.is_finite() && max.is_finite();
        ok.then(|| LogHistogram {
            counts: vec![0; buckets],
            ln_min: min.ln(),
            per_ln: (buckets - 1) as f64 / (max.ln() - min.ln()),
        })
    }

    /// Counts `n` values of `v` in the nearest bucket.
    pub fn add(&mut self, v: f64, n: u64) {
        let last = self.counts.len() - 1;
        let at = if v > 0.0 && v.is_finite() {
            ((v.ln() - self.ln_min) * self.per_ln + 0.5).floor()
        } else if v.is_nan() || v <= 0.0 {
            0.0
        } else {
            last as f64
        };
        self.counts[(at.max(0.0) as usize).min(last)] += n;
    }

    /// The bucket lines: the heading, then each bucket that holds a value.
    pub fn text(&self) -> String {
        let fullest = self.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
        let mut s = String::from("       value  ------------- distribution ------------- count\n");
        for (i, &n) in self.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            let value = (i as f64 / self.per_ln + self.ln_min).exp();
            let stars = "*".repeat((n as f64 * 40.0 / fullest).round() as usize);
            let _ = writeln!(s, "{value:>12.3} |{stars:<40} {n}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_go_to_the_nearest_log_bucket_and_outliers_to_the_ends() {
        let mut h = LogHistogram::new(1000, 1.0, 10.0).unwrap();
        for v in [1.0, 2.0, 0.0, 10.0, 100.0, 5.001] {
            h.add(v, 1);
        }
        let lines = [
            "       value  ------------- distribution ------------- count",
            "       1.000 |**************************************** 2",
            "       2.001 |********************                     1",
            "       4.997 |********************                     1",
            "      10.000 |**************************************** 2",
        ];
        assert_eq!(h.text(), lines.join("\n") + "\n");
        assert!(LogHistogram::new(1, 1.0, 2.0).is_none());
        assert!(LogHistogram::new(10, 0.0, 2.0).is_none());
    }
}
