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

/// P(X <= k) for X ~ Binomial(n, 1/2): counted up to 1,000 runs (2^n still a float), beyond
/// by the normal approximation with the continuity correction.
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    if n > 1000 {
        let nf = n as f64;
        return normal_cdf((k as f64 + 0.5 - nf / 2.0) / (nf.sqrt() / 2.0));
    }
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
    let mut a: Vec<f64> = a.iter().copied().filter(|x| x.is_finite()).collect();
    let mut b: Vec<f64> = b.iter().copied().filter(|x| x.is_finite()).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (n, m) = (a.len(), b.len());
    let total = n * m;
    let pairs = Pairs::new(&a, &b);
    let value = if total % 2 == 1 {
        pairs.kth(total / 2 + 1)
    } else {
        let (lo, hi) = (pairs.kth(total / 2), pairs.kth(total / 2 + 1));
        if lo.is_infinite() || hi.is_infinite() {
            hi
        } else {
            (lo + hi) / 2.0
        }
    };
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
    // The interval [r(k), r(nm+1-k)] covers the true ratio with 1 - 2 P(U <= k - 1).
    let (k, confidence) = if total <= EXACT_U {
        let counts = mann_whitney_counts(n, m);
        let all: f64 = counts.iter().sum();
        let mut cdf = Vec::with_capacity(counts.len());
        let mut sum = 0.0;
        for c in &counts {
            sum += c;
            cdf.push(sum / all);
        }
        order_statistic(total, |k| 1.0 - 2.0 * cdf[(k - 1).min(cdf.len() - 1)])
    } else {
        // U's normal approximation (with the continuity correction), as statistics
        // packages take it beyond their exact tables: mean nm/2, variance nm(n+m+1)/12.
        let (nf, mf) = (n as f64, m as f64);
        let sd = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        order_statistic(total, |k| {
            1.0 - 2.0 * normal_cdf(((k - 1) as f64 + 0.5 - nf * mf / 2.0) / sd)
        })
    };
    Some(Estimate {
        value,
        lo: pairs.kth(k),
        hi: pairs.kth(total + 1 - k),
        confidence,
        runs: n.min(m),
        busy: false,
    })
}

/// Up to this many pairs, U's distribution is counted exactly (its table costs the square of
/// it); beyond, its normal approximation is as close as the figures are printed.
const EXACT_U: usize = 2500;

/// Up to this many pairs, every ratio is listed and sorted; beyond (series of hundreds of
/// builds, whose change sizes pool their runs), an order statistic of them is found by
/// bisection over the values, counting the ratios at or below one in a pass over both sorted
/// sides, so that a report stays linear in its runs.
const LISTED_PAIRS: usize = 1 << 16;

/// The ratios a_i / b_j of two sorted samples, and their order statistics.
enum Pairs<'a> {
    Listed(Vec<f64>),
    Counted(&'a [f64], &'a [f64]),
}

impl<'a> Pairs<'a> {
    fn new(a: &'a [f64], b: &'a [f64]) -> Pairs<'a> {
        // Counting needs a ratio that falls as its base grows: positive values (a base of 0
        // or below is listed, as ratio_of rules it).
        let positive = a[0] > 0.0 && b[0] > 0.0;
        if a.len() * b.len() <= LISTED_PAIRS || !positive {
            let mut r: Vec<f64> = a
                .iter()
                .flat_map(|x| b.iter().map(move |y| ratio_of(*x, *y)))
                .collect();
            r.sort_by(f64::total_cmp);
            Pairs::Listed(r)
        } else {
            Pairs::Counted(a, b)
        }
    }

    /// The k-th smallest ratio, from 1.
    fn kth(&self, k: usize) -> f64 {
        match self {
            Pairs::Listed(r) => r[k - 1],
            Pairs::Counted(a, b) => {
                // The least value v (over the ordered bits of positive floats) with at least
                // k ratios at or below it: a ratio itself.
                let (mut lo, mut hi) = (
                    (a[0] / b[b.len() - 1]).to_bits(),
                    (a[a.len() - 1] / b[0]).to_bits(),
                );
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if at_or_below(a, b, f64::from_bits(mid)) >= k {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                f64::from_bits(lo)
            }
        }
    }
}

/// How many a_i / b_j are at or below `v` (both sorted, positive): for a larger base the same
/// share of `a` or more qualifies, so one pointer walks `a` once.
fn at_or_below(a: &[f64], b: &[f64], v: f64) -> usize {
    let mut i = 0;
    let mut count = 0;
    for y in b {
        while i < a.len() && a[i] / y <= v {
            i += 1;
        }
        count += i;
    }
    count
}

/// The standard normal distribution function.
fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
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

    /// Many runs a side (a change size over hundreds of builds): the order statistics found
    /// by counting are those of the sorted list of every ratio, the interval's coverage from
    /// U's normal approximation is near its exact count, and a median of 2,000 runs has one.
    #[test]
    fn order_statistics_of_many_ratios_are_those_of_the_sorted_list() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut a: Vec<f64> = (0..400)
            .map(|_| 100.0 + rng.random::<f64>() * 9.0)
            .collect();
        let mut b: Vec<f64> = (0..300).map(|_| 95.0 + rng.random::<f64>() * 9.0).collect();
        // Ties too.
        a.extend([101.0; 20]);
        b.extend([101.0; 20]);
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let counted = Pairs::new(&a, &b);
        assert!(
            matches!(counted, Pairs::Counted(..)),
            "420 x 320 is counted"
        );
        let mut all: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x / y))
            .collect();
        all.sort_by(f64::total_cmp);
        for k in [
            1,
            2,
            1000,
            all.len() / 2,
            all.len() / 2 + 1,
            all.len() - 7,
            all.len(),
        ] {
            assert_eq!(counted.kth(k), all[k - 1], "k = {k}");
        }
        // 50 x 50 is exact (2,500 pairs); 51 x 50 approximated: the coverages agree.
        let (x, y): (Vec<f64>, Vec<f64>) = (a[..51].to_vec(), b[..50].to_vec());
        let exact = ratio(&x[..50], &y).unwrap();
        let approx = ratio(&x, &y).unwrap();
        assert!(
            (exact.confidence - approx.confidence).abs() < 0.01,
            "{exact:?} {approx:?}"
        );
        let big: Vec<f64> = (0..2000).map(|i| f64::from(i % 97)).collect();
        let e = median(&big).unwrap();
        assert!(
            e.confidence >= AIM && e.lo <= e.value && e.value <= e.hi,
            "{e:?}"
        );
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
