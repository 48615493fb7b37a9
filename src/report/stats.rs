//! Figures of repeated runs: the median with a distribution-free confidence interval, and the
//! ratio of two columns with the interval of the Hodges-Lehmann estimate. Benchmark repeats
//! are few (3 to 10) and not normal (a slow run is much slower, a fast one barely faster), so
//! nothing here assumes a distribution: the intervals come from order statistics.

use serde::Serialize;

/// The confidence the intervals aim for; with few repeats no interval reaches it, and the
/// widest one (min to max) is taken with the confidence it has.
pub const AIM: f64 = 0.95;

/// A figure of repeated runs: its estimate, the interval, how sure the interval is, and of how
/// many runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval's coverage (0.75 for the range of 3 runs).
    pub confidence: f64,
    pub runs: usize,
    /// Built on a run measured on a busy machine: never called a difference.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub busy: bool,
}

impl Estimate {
    /// Whether the interval of a ratio leaves out 1: a difference, not noise (and not the
    /// load of another process: never when a run it stands on was measured on a busy machine).
    pub fn excludes_one(&self) -> bool {
        !self.busy && (self.lo > 1.0 || self.hi < 1.0)
    }
}

/// P(X <= k) for X ~ Binomial(n, 1/2).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let mut c = 1.0_f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2.0_f64.powi(n as i32)
}

/// The median of `samples` and the interval [x(k), x(n+1-k)] of order statistics that covers
/// the true median with probability 1 - 2 P(Bin(n, 1/2) <= k - 1), the narrowest that reaches
/// [`AIM`] (or the range). None for no samples.
pub fn median(samples: &[f64]) -> Option<Estimate> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let value = median_of(&v)?;
    let (k, confidence) = order_statistic(n, |k| 1.0 - 2.0 * binomial_half_cdf(n, k - 1));
    Some(Estimate {
        value,
        lo: v[k - 1],
        hi: v[n - k],
        confidence,
        runs: n,
        busy: false,
    })
}

/// The largest k in 1..=n/2 whose coverage reaches [`AIM`], else 1 (the range); with its
/// coverage.
fn order_statistic(n: usize, coverage: impl Fn(usize) -> f64) -> (usize, f64) {
    let mut best = (1, coverage(1).max(0.0));
    for k in 2..=n.div_ceil(2) {
        let c = coverage(k);
        if c >= AIM {
            best = (k, c);
        } else {
            break;
        }
    }
    best
}

/// The number of orderings of n x's and m y's with Mann-Whitney statistic U = u, for every u.
fn mann_whitney_counts(n: usize, m: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i x's and j y's with U = u; built up one element at a time.
    let max = n * m;
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; m + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0; // i = 0 x's: U = 0
    }
    for _ in 0..n {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max + 1]; m + 1];
        cur[0][0] = 1.0;
        for j in 1..=m {
            for u in 0..=max {
                // The largest element is an x (beats j y's) or a y.
                let from_x = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_x + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev[m].clone()
}

/// The ratio of column `a` to base `b` from repeated runs: the Hodges-Lehmann estimate (the
/// median of every a_i / b_j) and its Mann-Whitney interval of order statistics of those ratios
/// (distribution-free for a shift on the log scale). None when a side has no sample; a base
/// with zeros gives ratios as [`ratio_of`] does.
pub fn ratio(a: &[f64], b: &[f64]) -> Option<Estimate> {
    let a: Vec<f64> = a.iter().copied().filter(|x| x.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|x| x.is_finite()).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut r: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| ratio_of(*x, *y)))
        .collect();
    r.sort_by(f64::total_cmp);
    let (n, m) = (a.len(), b.len());
    let total = r.len();
    let value = median_of(&r)?;
    if n == 1 && m == 1 {
        return Some(Estimate {
            value,
            lo: value,
            hi: value,
            confidence: 0.0,
            runs: 1,
            busy: false,
        });
    }
    let counts = mann_whitney_counts(n, m);
    let all: f64 = counts.iter().sum();
    let cdf = |u: usize| counts[..=u.min(counts.len() - 1)].iter().sum::<f64>() / all;
    // The interval [r(k), r(nm+1-k)] covers the true ratio with 1 - 2 P(U <= k - 1).
    let (k, confidence) = order_statistic(total, |k| 1.0 - 2.0 * cdf(k - 1));
    Some(Estimate {
        value,
        lo: r[k - 1],
        hi: r[total - k],
        confidence,
        runs: n.min(m),
        busy: false,
    })
}

/// docs/workloads.md section 5: value / base; 1 when both are 0; inf when only the base is 0
/// (the relative tables show no ratio there: a 0 base is no basis).
pub fn ratio_of(value: f64, base: f64) -> f64 {
    if base == 0.0 {
        if value == 0.0 { 1.0 } else { f64::INFINITY }
    } else {
        value / base
    }
}

/// The median of some values (None when there are none).
pub fn median_of(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        let (a, b) = (v[n / 2 - 1], v[n / 2]);
        if a.is_infinite() || b.is_infinite() {
            b
        } else {
            (a + b) / 2.0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interval_of_few_runs_is_their_range_with_its_confidence() {
        let e = median(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (11.0, 10.0, 12.0));
        assert!((e.confidence - 0.75).abs() < 1e-12, "{e:?}");
        // 9 runs: [x(2), x(8)] covers 1 - 2 * 10/512 = 0.961.
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let e = median(&v).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (5.0, 2.0, 8.0));
        assert!((e.confidence - (1.0 - 2.0 * 10.0 / 512.0)).abs() < 1e-12);
    }

    #[test]
    fn mann_whitney_counts_are_the_known_table() {
        // n = m = 2: U in 0..=4 with counts 1, 1, 2, 1, 1 (6 orderings).
        assert_eq!(mann_whitney_counts(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
        let c = mann_whitney_counts(3, 3);
        assert_eq!(c.iter().sum::<f64>(), 20.0);
        assert_eq!(c[0], 1.0);
    }

    #[test]
    fn a_column_against_itself_is_no_difference_and_a_clear_shift_is() {
        let a = [100.0, 104.0, 97.0];
        let same = ratio(&a, &a).unwrap();
        assert!((same.value - 1.0).abs() < 1e-12, "{same:?}");
        assert!(!same.excludes_one(), "{same:?}");
        let b = [120.0, 125.0, 118.0];
        let up = ratio(&b, &a).unwrap();
        assert!(up.excludes_one() && up.value > 1.1, "{up:?}");
        // 3 vs 3: the range of the 9 ratios covers 1 - 2/20 = 0.90.
        assert!((up.confidence - 0.9).abs() < 1e-12, "{up:?}");
        // Overlapping runs are no difference.
        let c = [99.0, 106.0, 101.0];
        assert!(!ratio(&c, &a).unwrap().excludes_one());
    }

    #[test]
    fn ratio_rules() {
        assert_eq!(ratio_of(0.0, 0.0), 1.0);
        assert_eq!(ratio_of(5.0, 0.0), f64::INFINITY);
        assert_eq!(ratio_of(3.0, 4.0), 0.75);
    }

    #[test]
    fn medians() {
        assert_eq!(median_of(&[]), None);
        assert_eq!(median_of(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median_of(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        // inf sorts last; a middle pair with inf takes the larger.
        assert_eq!(median_of(&[1.0, f64::INFINITY, 0.5]), Some(1.0));
        assert_eq!(median_of(&[1.0, f64::INFINITY]), Some(f64::INFINITY));
    }
}
