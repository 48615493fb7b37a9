//! pgbench 15's random numbers: PostgreSQL's `pg_prng` generator (xoroshiro128**, seeded
//! through splitmix64) and pgbench's functions over it, so that a script run with
//! `--random-seed=N` draws the values pgbench draws (pgbench's own suite checks them).

/// The generator's state: two words, never both zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

/// One step of splitmix64 on `state`.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl PgPrng {
    /// Seeded as `pg_prng_seed` seeds: the two words from splitmix64 over the seed.
    pub fn seeded(seed: u64) -> PgPrng {
        let mut s = seed;
        let (s0, s1) = (splitmix64(&mut s), splitmix64(&mut s));
        if s0 == 0 && s1 == 0 {
            // The generator's fixed point is never its state.
            return PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        PgPrng { s0, s1 }
    }

    /// The states pgbench gives its clients from `--random-seed`: client `i` is seeded with
    /// the base sequence's (i+1)th draw; the draw after the last client's is `:default_seed`.
    pub fn for_client(random_seed: u64, client: u32) -> PgPrng {
        let mut base = PgPrng::seeded(random_seed);
        for _ in 0..client {
            base.next_u64();
        }
        PgPrng::seeded(base.next_u64())
    }

    /// `:default_seed` for a run of `clients` clients (see [`PgPrng::for_client`]).
    pub fn default_seed(random_seed: u64, clients: u32) -> u64 {
        let mut base = PgPrng::seeded(random_seed);
        for _ in 0..clients {
            base.next_u64();
        }
        base.next_u64()
    }

    /// xoroshiro128**'s next output.
    pub fn next_u64(&mut self) -> u64 {
        let (s0, sx) = (self.s0, self.s1 ^ self.s0);
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// A uniform draw in `lo..=hi` (`lo <= hi`): the top bits that cover the range, drawn
    /// again while above it.
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let range = hi - lo;
        let shift = range.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= range {
                return lo + v;
            }
        }
    }

    /// A uniform double in [0, 1) from the top 52 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// `random(lo, hi)` (a range whose size fits a bigint).
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        lo.wrapping_add(self.range_u64(0, hi.wrapping_sub(lo) as u64) as i64)
    }

    /// `random_exponential(lo, hi, p)`: a truncated exponential over the range.
    pub fn exponential(&mut self, lo: i64, hi: i64, p: f64) -> i64 {
        let cut = (-p).exp();
        let u = 1.0 - self.unit();
        let r = -(cut + (1.0 - cut) * u).ln() / p;
        lo + ((hi - lo + 1) as f64 * r) as i64
    }

    /// `random_gaussian(lo, hi, p)`: a normal draw (Box-Muller, the sine half) kept within
    /// p standard deviations, mapped onto the range.
    pub fn gaussian(&mut self, lo: i64, hi: i64, p: f64) -> i64 {
        let z = loop {
            let u1 = 1.0 - self.unit();
            let u2 = 1.0 - self.unit();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
            if z >= -p && z < p {
                break z;
            }
        };
        let r = (z + p) / (p * 2.0);
        lo + ((hi - lo + 1) as f64 * r) as i64
    }

    /// `random_zipfian(lo, hi, s)`: the rejection method for a Zipfian of `hi - lo + 1` values.
    pub fn zipfian(&mut self, lo: i64, hi: i64, s: f64) -> i64 {
        let n = hi - lo + 1;
        if n <= 1 {
            return lo;
        }
        let b = 2f64.powf(s - 1.0);
        loop {
            let u = self.unit();
            let v = self.unit();
            let x = u.powf(-1.0 / (s - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(s - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
                return lo - 1 + x as i64;
            }
        }
    }
}

/// `permute(i, size, seed)`: a pseudorandom permutation of `0..size` keyed by `seed`, as
/// pgbench computes it (six rounds of an invertible mix over the size's bit mask, walked
/// from both ends, each then rotated by a uniform offset).
pub fn permute(i: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut st = PgPrng::seeded(seed as u64);
    let size = size as u64;
    let mut v = (i as u64) % size;
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    let mix = |x: u64, m: u64, r: u64| {
        let x = (x.wrapping_mul(m) ^ r) & mask;
        ((x << 1) & mask) | (x >> (masklen - 1))
    };
    for _ in 0..6 {
        let m = (st.next_u64() & mask) | 1;
        let r = st.next_u64() & mask;
        if v <= mask {
            v = mix(v, m, r);
        }
        let m = (st.next_u64() & mask) | 1;
        let r = st.next_u64() & mask;
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - mix(t, m, r);
        }
        let r = st.range_u64(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_is_a_permutation_for_sizes_about_powers_of_two() {
        for size in [2i64, 3, 7, 8, 9, 100, 1000] {
            let mut seen: Vec<i64> = (0..size).map(|i| permute(i, size, 5432)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..size).collect::<Vec<_>>(), "size {size}");
        }
        assert_eq!(permute(5, 1, 1), 0);
    }

    #[test]
    fn debug_prints_doubles_as_cs_percent_15g() {
        use super::super::eval::format_g;
        assert_eq!(format_g(17.094, 15), "17.094");
        assert_eq!(format_g(8.507059173023462e37, 15), "8.50705917302346e+37");
        assert_eq!(format_g(1e30, 15), "1e+30");
        assert_eq!(format_g(-0.00032, 15), "-0.00032");
        assert_eq!(format_g(0.000012345, 15), "1.2345e-05");
        assert_eq!(format_g(1024.0, 15), "1024");
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut r = PgPrng::for_client(5432, 0);
        for _ in 0..2000 {
            assert!((10..=19).contains(&r.uniform(10, 19)));
            assert!((100..=199).contains(&r.exponential(100, 199, 10.0)));
            assert!((1000..=1999).contains(&r.gaussian(1000, 1999, 10.0)));
            assert!((1..=9).contains(&r.zipfian(1, 9, 1.3)));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(PgPrng::seeded(0), PgPrng::seeded(0));
        assert_ne!(PgPrng::for_client(1, 0), PgPrng::for_client(1, 1));
    }
}
