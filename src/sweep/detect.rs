//! `detect`'s rule: how small a change runs of a given spread resolve.

/// The smallest change between two builds that runs of this spread resolve with as many runs
/// each: (1.96 + 0.84) x the coefficient of variation x sqrt(2 / n) (a two-sided 5% test with
/// 80% power).
pub(super) fn resolvable(runs: &[f64]) -> f64 {
    let n = runs.len() as f64;
    let mean = runs.iter().sum::<f64>() / n;
    let var = runs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    2.8 * (var.sqrt() / mean) * (2.0 / n).sqrt()
}

#[cfg(test)]
mod tests {
    use super::resolvable;

    #[test]
    fn the_rounds_a_known_spread_needs_resolve_the_change_asked() {
        // Runs of a 1% coefficient of variation: 2.8 x 1% x sqrt(2/n) is 2.29% at 3 runs and
        // 1.98% at 4, so a 2% change needs the fourth round.
        let runs = |n: usize| -> Vec<f64> {
            // Symmetric runs of exactly 1% sample standard deviation around 1000.
            let half = n / 2;
            let mut v = vec![1000.0; n];
            let d = 10.0 * ((n - 1) as f64 / (2 * half) as f64).sqrt();
            for i in 0..half {
                v[i] += d;
                v[n - 1 - i] -= d;
            }
            v
        };
        assert!(
            (resolvable(&runs(3)) - 0.0229).abs() < 0.0005,
            "{}",
            resolvable(&runs(3))
        );
        assert!(resolvable(&runs(3)) > 0.02);
        assert!(resolvable(&runs(4)) <= 0.02, "{}", resolvable(&runs(4)));
    }
}
