//! Random numbers for workloads: sysbench's id distributions and string templates.
//!
//! Each client thread owns one [`Rand`], seeded from `--rand-seed` and its thread number, so a
//! seeded run draws the same ids on every client every time (sysbench's seeding does not).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Which distribution `--rand-type` picks for ids and `k` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Zipfian,
    Pareto,
    Gaussian,
    Special,
}

/// The resolved `--rand-*` options.
#[derive(Clone, Debug, Serialize)]
pub struct RandOptions {
    pub rand_type: RandType,
    /// The seed actually used (a random one when `--rand-seed` is 0), saved so a run can be redone.
    pub rand_seed: u64,
    pub rand_zipfian_exp: f64,
    pub rand_pareto_h: f64,
    pub rand_spec_pct: f64,
    pub rand_spec_res: f64,
}

/// Number of uniform draws averaged by the gaussian distribution (sysbench's `--rand-spec-iter`).
const GAUSSIAN_ITER: u32 = 12;

/// A distribution over `1..=n`, with whatever it precomputes for that `n`.
#[derive(Clone, Debug)]
pub enum Dist {
    Uniform,
    Zipfian(Zipf),
    Pareto { power: f64 },
    Gaussian,
    Special { window: f64, hot: f64 },
}

impl Dist {
    /// Builds the distribution for ids in `1..=n`.
    pub fn new(opts: &RandOptions, n: u64) -> Dist {
        match opts.rand_type {
            RandType::Uniform => Dist::Uniform,
            RandType::Zipfian => Dist::Zipfian(Zipf::new(n.max(1), opts.rand_zipfian_exp)),
            RandType::Pareto => {
                let h = opts.rand_pareto_h;
                Dist::Pareto {
                    power: h.ln() / (1.0 - h).ln(),
                }
            }
            RandType::Gaussian => Dist::Gaussian,
            RandType::Special => Dist::Special {
                window: opts.rand_spec_pct / 100.0,
                hot: opts.rand_spec_res / 100.0,
            },
        }
    }
}

/// A client's random source.
#[derive(Clone)]
pub struct Rand {
    rng: SmallRng,
}

impl Rand {
    /// The generator of client `thread` for a run seeded with `seed`.
    pub fn for_thread(seed: u64, thread: u32) -> Rand {
        // Mix the thread number in so that clients do not draw the same sequence.
        let mixed = seed ^ (u64::from(thread) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Rand {
            rng: SmallRng::seed_from_u64(mixed),
        }
    }

    /// Uniform in `a..=b`.
    #[inline]
    pub fn uniform(&mut self, a: u64, b: u64) -> u64 {
        if b <= a {
            return a;
        }
        self.rng.random_range(a..=b)
    }

    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// A draw from `dist` over `a..=b`.
    #[inline]
    pub fn draw(&mut self, dist: &Dist, a: u64, b: u64) -> u64 {
        if b <= a {
            return a;
        }
        let span = b - a + 1;
        match dist {
            Dist::Uniform => self.uniform(a, b),
            Dist::Zipfian(z) => a + (z.sample(self) - 1).min(span - 1),
            Dist::Pareto { power } => {
                let off = (span as f64 * self.unit().powf(*power)) as u64;
                a + off.min(span - 1)
            }
            Dist::Gaussian => self.gaussian(a, b),
            Dist::Special { window, hot } => {
                if self.unit() < *hot {
                    let width = ((span as f64 * window) as u64).max(1);
                    let start = a + (span - width) / 2;
                    self.uniform(start, start + width - 1)
                } else {
                    self.gaussian(a, b)
                }
            }
        }
    }

    /// Mean of [`GAUSSIAN_ITER`] uniform draws over `a..=b`: bell-shaped around the middle.
    fn gaussian(&mut self, a: u64, b: u64) -> u64 {
        let mut sum: u128 = 0;
        for _ in 0..GAUSSIAN_ITER {
            sum += u128::from(self.uniform(a, b));
        }
        (sum / u128::from(GAUSSIAN_ITER)) as u64
    }

    /// Overwrites `buf` with `template`, `#` replaced by a random digit and `@` by a random
    /// lower-case letter (sysbench's `rand.string`). Reuses `buf`'s allocation.
    pub fn fill_template(&mut self, template: &str, buf: &mut String) {
        buf.clear();
        for ch in template.chars() {
            match ch {
                '#' => buf.push((b'0' + self.rng.random_range(0..10u8)) as char),
                '@' => buf.push((b'a' + self.rng.random_range(0..26u8)) as char),
                other => buf.push(other),
            }
        }
    }

    /// Overwrites `buf` with `groups` groups of 11 random digits joined by `-`, the sysbench
    /// `c` (10 groups) and `pad` (5 groups) values; faster than going through a template.
    #[inline]
    pub fn fill_digit_groups(&mut self, groups: usize, buf: &mut String) {
        buf.clear();
        for g in 0..groups {
            if g > 0 {
                buf.push('-');
            }
            // One 64-bit draw gives 11 digits (10^11 < 2^37) with little waste.
            let mut v = self.rng.random_range(0..100_000_000_000u64);
            let mut digits = [b'0'; 11];
            for d in digits.iter_mut().rev() {
                *d = b'0' + (v % 10) as u8;
                v /= 10;
            }
            buf.push_str(std::str::from_utf8(&digits).expect("ascii digits"));
        }
    }
}

/// Zipf sampling over `1..=n` by rejection-inversion (Hörmann and Derflinger, 1996): constant
/// time per draw, no table, any exponent above 0.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    exp: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, exp: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            exp,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    pub(crate) fn sample(&self, r: &mut Rand) -> u64 {
        loop {
            let u = self.h_integral_n + r.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// `h(x) = x^-exp`, the unnormalised density.
    fn h(&self, x: f64) -> f64 {
        (-self.exp * x.ln()).exp()
    }

    /// `H(x) = (x^(1-exp) - 1) / (1 - exp)`, an antiderivative of `h` (`ln x` when exp = 1).
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.exp) * lx) * lx
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exp)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }
}

/// `ln(1+x)/x`, accurate near 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1)/x`, accurate near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(t: RandType) -> RandOptions {
        RandOptions {
            rand_type: t,
            rand_seed: 42,
            rand_zipfian_exp: 0.8,
            rand_pareto_h: 0.2,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
        }
    }

    fn draws(t: RandType, a: u64, b: u64, count: usize) -> Vec<u64> {
        let dist = Dist::new(&opts(t), b - a + 1);
        let mut r = Rand::for_thread(7, 0);
        (0..count).map(|_| r.draw(&dist, a, b)).collect()
    }

    fn mean_sd(v: &[u64]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    #[test]
    fn uniform_mean_and_spread_match_theory() {
        let v = draws(RandType::Uniform, 1, 10_000, 200_000);
        assert!(v.iter().all(|&x| (1..=10_000).contains(&x)));
        let (mean, sd) = mean_sd(&v);
        // Uniform over 1..=n: mean (n+1)/2, sd n/sqrt(12).
        assert!((mean - 5000.5).abs() < 50.0, "mean {mean}");
        assert!((sd - 10_000.0 / 12f64.sqrt()).abs() < 40.0, "sd {sd}");
    }

    #[test]
    fn gaussian_is_centred_with_the_spread_of_a_mean_of_twelve() {
        let v = draws(RandType::Gaussian, 1, 10_000, 100_000);
        let (mean, sd) = mean_sd(&v);
        // The mean of 12 uniforms has sd (n/sqrt(12))/sqrt(12) = n/12.
        assert!((mean - 5000.5).abs() < 20.0, "mean {mean}");
        assert!((sd - 10_000.0 / 12.0).abs() < 25.0, "sd {sd}");
        // Not the constant `a` that sysbench master returns.
        assert!(v.iter().filter(|&&x| x == 1).count() < 10);
    }

    #[test]
    fn zipfian_hottest_value_is_a_and_frequencies_fall_with_rank() {
        let v = draws(RandType::Zipfian, 5, 1004, 200_000);
        assert!(v.iter().all(|&x| (5..=1004).contains(&x)));
        let mut counts = vec![0usize; 1000];
        for x in &v {
            counts[(x - 5) as usize] += 1;
        }
        let hottest = counts
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| **c)
            .unwrap()
            .0;
        assert_eq!(hottest, 0, "value a must be the hottest");
        // For exponent s, p(1)/p(2) = 2^s.
        let ratio = counts[0] as f64 / counts[1] as f64;
        assert!((ratio - 2f64.powf(0.8)).abs() < 0.1, "ratio {ratio}");
        assert!(counts[9] > counts[99] && counts[99] > counts[999]);
    }

    #[test]
    fn pareto_is_skewed_towards_a() {
        let v = draws(RandType::Pareto, 1, 10_000, 100_000);
        assert!(v.iter().all(|&x| (1..=10_000).contains(&x)));
        // With h = 0.2, 80% of draws fall in the first 20% of the range.
        let low = v.iter().filter(|&&x| x <= 2_000).count() as f64 / v.len() as f64;
        assert!((low - 0.8).abs() < 0.02, "share in first 20%: {low}");
    }

    #[test]
    fn special_puts_three_quarters_of_draws_in_the_middle_percent() {
        let v = draws(RandType::Special, 1, 100_000, 200_000);
        let (lo, hi) = (49_501, 50_500);
        let hot = v.iter().filter(|&&x| (lo..=hi).contains(&x)).count() as f64 / v.len() as f64;
        // 75% by construction plus the gaussian's small share of that window.
        assert!(hot > 0.75 && hot < 0.80, "share in middle 1%: {hot}");
        let (mean, _) = mean_sd(&v);
        assert!((mean - 50_000.0).abs() < 300.0);
    }

    #[test]
    fn seeded_generators_repeat_and_threads_differ() {
        let dist = Dist::Uniform;
        let seq = |seed, t| {
            let mut r = Rand::for_thread(seed, t);
            (0..20)
                .map(|_| r.draw(&dist, 1, 1_000_000))
                .collect::<Vec<_>>()
        };
        assert_eq!(seq(1, 0), seq(1, 0));
        assert_ne!(seq(1, 0), seq(1, 1));
        assert_ne!(seq(1, 0), seq(2, 0));
    }

    #[test]
    fn templates_replace_hash_and_at_and_copy_the_rest() {
        let mut r = Rand::for_thread(3, 0);
        let mut buf = String::new();
        r.fill_template("ab-###-@@@-x", &mut buf);
        let b = buf.as_bytes();
        assert_eq!(buf.len(), 12);
        assert_eq!(&buf[0..3], "ab-");
        assert!(b[3..6].iter().all(u8::is_ascii_digit));
        assert_eq!(b[6], b'-');
        assert!(b[7..10].iter().all(u8::is_ascii_lowercase));
        assert_eq!(&buf[10..], "-x");
    }

    #[test]
    fn digit_groups_have_the_sysbench_c_and_pad_shape() {
        let mut r = Rand::for_thread(3, 0);
        let mut buf = String::new();
        r.fill_digit_groups(10, &mut buf);
        assert_eq!(buf.len(), 119);
        let groups: Vec<&str> = buf.split('-').collect();
        assert_eq!(groups.len(), 10);
        assert!(
            groups
                .iter()
                .all(|g| g.len() == 11 && g.bytes().all(|c| c.is_ascii_digit()))
        );
        r.fill_digit_groups(5, &mut buf);
        assert_eq!(buf.len(), 59);
        // Leading zeros must occur: digits are uniform, not a formatted number.
        let mut zeros = 0;
        for _ in 0..200 {
            r.fill_digit_groups(1, &mut buf);
            zeros += usize::from(buf.starts_with('0'));
        }
        assert!(zeros > 5);
    }
}
