//! LinkBench's distributions, as its Java code computes them: the out-degree of each node
//! (a measured distribution read from `Distribution.dat`, each node's place in it shuffled),
//! the id2s of loaded links and of requests (its ID2Chooser), the ids its requests pick (its
//! Zipf quantile, blended between a shuffle correlated with the out-degree and one that is
//! not), and the payloads' log-normal lengths. The shuffles use Java's `Random` with the
//! original's seeds, so node N has the out-degree it has in the original's load.

use std::path::Path;

use super::super::rand::Rand;

/// java.util.Random: a 48-bit linear congruential generator, as the original seeds its
/// shuffles with it.
pub(super) struct JavaRandom(u64);

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    pub(super) fn new(seed: i64) -> JavaRandom {
        JavaRandom((seed as u64 ^ MULTIPLIER) & MASK)
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.0 = (self.0.wrapping_mul(MULTIPLIER).wrapping_add(0xB)) & MASK;
        (self.0 >> (48 - bits)) as i32
    }

    /// `nextInt(bound)`, bound > 0.
    pub(super) fn next_int(&mut self, bound: i32) -> i32 {
        if bound & bound.wrapping_neg() == bound {
            return ((i64::from(bound) * i64::from(self.next(31))) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let val = bits % bound;
            if bits.wrapping_sub(val).wrapping_add(bound - 1) >= 0 {
                return val;
            }
        }
    }
}

/// The original's InvertibleShuffler: ids in groups by their remainder, each group rotated by
/// a random amount.
#[derive(Clone, Debug)]
pub(super) struct Shuffler {
    rotations: Vec<u64>,
    groups: u64,
    n: u64,
    rounded_up: u64,
    rounded_down: u64,
    min_group: u64,
}

/// The shuffles' seeds (RealDistribution's), 1,024 groups each.
pub(super) const LINKS_SEED: i64 = 20_343_988_438_726_021;
pub(super) const UNCORRELATED_SEED: i64 = 53_238_253_823_453;
pub(super) const NODES_SEED: i64 = 4_766_565_305_853_767_165;
const GROUPS: u64 = 1024;

impl Shuffler {
    /// A shuffle of `0..n` (n >= 1, below 2^31).
    pub(super) fn new(seed: i64, n: u64) -> Shuffler {
        let groups = GROUPS.min(n);
        let min_group = n / groups;
        let mut rng = JavaRandom::new(seed);
        let rotations = (0..groups)
            .map(|_| u64::from(rng.next_int(min_group as i32).unsigned_abs()))
            .collect();
        let rounded_down = min_group * groups;
        let rounded_up = if n == rounded_down {
            n
        } else {
            rounded_down + groups
        };
        Shuffler {
            rotations,
            groups,
            n,
            rounded_up,
            rounded_down,
            min_group,
        }
    }

    pub(super) fn permute(&self, i: u64) -> u64 {
        self.apply(i, false)
    }

    pub(super) fn invert(&self, i: u64) -> u64 {
        self.apply(i, true)
    }

    fn apply(&self, i: u64, inverse: bool) -> u64 {
        debug_assert!(i < self.n);
        let group = i % self.groups;
        let big = group < self.n % self.groups;
        let mut rotate = self.rotations[group as usize];
        if inverse {
            rotate = if big {
                self.min_group + 1 - rotate
            } else {
                self.min_group - rotate
            };
        }
        let j = i + self.groups * rotate;
        if j < self.n {
            return j;
        }
        let r = if big {
            j % self.rounded_up
        } else {
            j % self.rounded_down
        };
        if r >= self.n { group } else { r }
    }
}

/// Where the out-degrees come from.
#[derive(Clone, Debug)]
pub enum DegreeSource {
    /// The original's measured distribution: the `nlinks` section of a `Distribution.dat`.
    Measured,
    /// dbsweep's stand-in (`linkbench_synthetic`): a discrete Pareto of the same shape,
    /// `floor(1.5 * U^(-1/1.4)) - 1`, at most 10,000.
    Synthetic,
}

/// The out-degree distribution as the original uses it: points (value, cumulative
/// probability), each node's degree the value at its shuffled place.
#[derive(Clone, Debug)]
pub struct Degrees {
    pub source: DegreeSource,
    cdf: Vec<(u64, f64)>,
    shuffler: Shuffler,
    nodes: u64,
}

/// The stand-in's tail and cap.
const SYNTHETIC_SCALE: f64 = 1.5;
const SYNTHETIC_TAIL: f64 = 1.4;
const SYNTHETIC_MAX: u64 = 10_000;

/// Link types, as the default configuration has them.
pub(super) const LINK_TYPES: u64 = 2;

impl Degrees {
    /// The measured distribution of `file` (a `Distribution.dat`) for `nodes` nodes.
    pub fn measured(file: &Path, nodes: u64) -> Result<Degrees, String> {
        let text = crate::input::read_text(file, crate::input::SMALL)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let cdf = parse_nlinks(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(Degrees::of(DegreeSource::Measured, cdf, nodes))
    }

    /// The stand-in distribution for `nodes` nodes.
    pub fn synthetic(nodes: u64) -> Degrees {
        let cdf = (0..=SYNTHETIC_MAX)
            .map(|v| {
                let p = if v == SYNTHETIC_MAX {
                    1.0
                } else {
                    1.0 - (SYNTHETIC_SCALE / (v as f64 + 2.0)).powf(SYNTHETIC_TAIL)
                };
                (v, p.max(0.0))
            })
            .collect();
        Degrees::of(DegreeSource::Synthetic, cdf, nodes)
    }

    fn of(source: DegreeSource, cdf: Vec<(u64, f64)>, nodes: u64) -> Degrees {
        Degrees {
            source,
            cdf,
            shuffler: Shuffler::new(LINKS_SEED, nodes),
            nodes,
        }
    }

    /// The nodes loaded.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The `n` most linked nodes, the most first.
    pub fn most_linked(&self, n: u64) -> impl Iterator<Item = u64> + '_ {
        (0..n.min(self.nodes)).map(|place| 1 + self.shuffler.permute(place))
    }

    /// Node `id1`'s loaded links over all types (calcTotalLinkCount).
    pub fn total(&self, id1: u64) -> u64 {
        let place = self.shuffler.invert(id1 - 1);
        // The most linked node first: u from 1 down to just above 0.
        let u = 1.0 - place as f64 / self.nodes as f64;
        let ix = self.cdf.partition_point(|&(_, p)| p < u);
        self.cdf.get(ix).map_or(0, |&(v, _)| v)
    }

    /// Node `id1`'s loaded links of type `t` (1-based): the original's split of the total,
    /// whose "left over" is the total less the even share, so that the types together may
    /// hold more links than the total (calcLinkCount; kept as the original has it).
    pub fn of_type(&self, id1: u64, t: u64) -> u64 {
        let total = self.total(id1);
        let even = total / LINK_TYPES;
        let left_over = total - even;
        if t - 1 < left_over { even + 1 } else { even }
    }

    /// The rows a load writes, about, from the distribution rather than node by node (the
    /// load's progress bar): the nodes, their links (the mean total a node) and a count row
    /// per type with links (type 1 has links from a total of 1, type 2 from 2).
    pub fn expected_rows(&self) -> u64 {
        let (mut mean, mut below) = (0.0, 0.0);
        let (mut p_none, mut p_one) = (0.0, 0.0);
        for &(v, p) in &self.cdf {
            mean += v as f64 * (p - below).max(0.0);
            below = p;
            if v == 0 {
                p_none = p;
            }
            if v <= 1 {
                p_one = p;
            }
        }
        let per_node = 1.0 + mean + (1.0 - p_none) + (1.0 - p_one);
        (self.nodes as f64 * per_node).round() as u64
    }

    /// The links a load writes for all nodes.
    pub fn loaded_links(&self) -> u64 {
        (1..=self.nodes)
            .map(|id| (1..=LINK_TYPES).map(|t| self.of_type(id, t)).sum::<u64>())
            .sum()
    }
}

/// The `nlinks` section of a Distribution.dat: lines of "value percent", values rising,
/// percentages cumulative and ending at 100.
fn parse_nlinks(text: &str) -> Result<Vec<(u64, f64)>, String> {
    let mut points = Vec::new();
    let mut section = None;
    for (n, line) in text.lines().enumerate() {
        let at = |what: &str| format!("line {}: {what}", n + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [name] if name.chars().all(|c| c.is_ascii_alphabetic() || c == '_') => {
                if section == Some("nlinks") {
                    break;
                }
                section = Some(*name);
            }
            [value, percent] if section == Some("nlinks") => {
                let value: u64 = value
                    .parse()
                    .map_err(|_| at(&format!("'{value}' is not a whole number")))?;
                let p: f64 = percent
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=100.0).contains(p))
                    .ok_or_else(|| at(&format!("'{percent}' is not a percentage")))?;
                if let Some(&(v, q)) = points.last()
                    && (value <= v || p / 100.0 < q)
                {
                    return Err(at("values must rise and percentages must not fall"));
                }
                points.push((value, p / 100.0));
            }
            [_, _] => {}
            _ => return Err(at("expected a section name or 'value percent'")),
        }
    }
    match points.last() {
        None => Err("no nlinks section (the out-degrees LinkBench measured)".into()),
        Some(&(_, p)) if p < 0.999_999 => Err(format!(
            "the nlinks section ends at {:.4}%, not 100%",
            p * 100.0
        )),
        Some(_) => {
            if let Some(last) = points.last_mut() {
                last.1 = 1.0;
            }
            Ok(points)
        }
    }
}

/// The original's Zipf quantile (Gray et al.'s approximation, with its approximate harmonic
/// numbers) over ranks `0..n`, the most popular first.
#[derive(Clone, Debug)]
pub(super) struct GrayZipf {
    n: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    half_theta: f64,
}

/// LinkBench's harmonic number of `n` and `m` (0 < m < 1): exact below 100,000, an
/// integral and a correction above.
fn harmonic(n: u64, m: f64) -> f64 {
    if n < 100_000 {
        return (1..=n).map(|i| 1.0 / (i as f64).powf(m)).sum();
    }
    (1.0 / (1.0 - m)) * (n as f64).powf(1.0 - m) + (0.58 - 1.0 / (1.0 - m))
}

impl GrayZipf {
    pub(super) fn new(n: u64, shape: f64) -> GrayZipf {
        let zetan = harmonic(n, shape);
        let nf = n as f64;
        GrayZipf {
            n: nf,
            zetan,
            alpha: 1.0 / (1.0 - shape),
            eta: (1.0 - (2.0 / nf).powf(1.0 - shape)) / (1.0 - harmonic(2, shape) / zetan),
            half_theta: 0.5f64.powf(shape),
        }
    }

    /// A rank for the uniform draw `p` in [0, 1).
    pub(super) fn quantile(&self, p: f64) -> u64 {
        let uz = p * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_theta {
            return 1.min(self.n as u64 - 1);
        }
        let offset = (self.n * (self.eta * p - self.eta + 1.0).powf(self.alpha)) as u64;
        offset.min(self.n as u64 - 1)
    }
}

/// How requests pick their ids, shared by a run's clients: the Zipf quantiles of each kind of
/// operation and the shuffles that place their ranks on nodes (link reads and writes mostly
/// by a shuffle of their own, partly by the out-degree's, so that a share of them goes to the
/// most linked nodes; node reads and updates by one shuffle: the same nodes are hot for both).
#[derive(Clone, Debug)]
pub(super) struct Picks {
    pub(super) link_reads: GrayZipf,
    pub(super) link_writes: GrayZipf,
    pub(super) node_reads: GrayZipf,
    pub(super) node_updates: GrayZipf,
    uncorrelated: Shuffler,
    nodes: Shuffler,
}

impl Picks {
    pub(super) fn new(n: u64, shapes: [f64; 4]) -> Picks {
        Picks {
            link_reads: GrayZipf::new(n, shapes[0]),
            link_writes: GrayZipf::new(n, shapes[1]),
            node_reads: GrayZipf::new(n, shapes[2]),
            node_updates: GrayZipf::new(n, shapes[3]),
            uncorrelated: Shuffler::new(UNCORRELATED_SEED, n),
            nodes: Shuffler::new(NODES_SEED, n),
        }
    }

    /// A link operation's id1: a rank of `z`, placed by the out-degree's shuffle with chance
    /// `correlated`, else by the uncorrelated one.
    pub(super) fn link_id(
        &self,
        z: &GrayZipf,
        correlated: f64,
        degrees: &Degrees,
        rand: &mut Rand,
    ) -> u64 {
        let shuffle = if rand.unit() < correlated {
            &degrees.shuffler
        } else {
            &self.uncorrelated
        };
        1 + shuffle.permute(z.quantile(rand.unit()))
    }

    /// A node operation's id: a rank of `z` placed by the nodes' shuffle.
    pub(super) fn node_id(&self, z: &GrayZipf, rand: &mut Rand) -> u64 {
        1 + self.nodes.permute(z.quantile(rand.unit()))
    }
}

/// ID2Chooser's id2 for an operation on (id1, type t) meant to find a loaded link with chance
/// about `p`: id1 plus a uniform offset below ceil(loaded links of (id1, t) / p).
pub(super) fn id2_for(degrees: &Degrees, (id1, t): (u64, u64), p: f64, rand: &mut Rand) -> u64 {
    id1 + rand.uniform(0, id2_range(degrees, (id1, t), p) - 1)
}

fn id2_range(degrees: &Degrees, (id1, t): (u64, u64), p: f64) -> u64 {
    ((1.0 / p) * degrees.of_type(id1, t) as f64).ceil().max(1.0) as u64
}

/// ID2Chooser's `n` id2s of a multiget: the first `n` after id1 when the range is no larger,
/// else draws that differ (after at most 100 tries each).
pub(super) fn id2s_for(
    degrees: &Degrees,
    (id1, t): (u64, u64),
    n: usize,
    p: f64,
    rand: &mut Rand,
    out: &mut Vec<u64>,
) {
    out.clear();
    let range = id2_range(degrees, (id1, t), p);
    if range <= n as u64 {
        out.extend((0..n as u64).map(|i| id1 + i));
        return;
    }
    for _ in 0..n {
        let mut id2 = id1 + rand.uniform(0, range - 1);
        let mut tries = 1;
        while out.contains(&id2) && tries <= 100 {
            id2 = id1 + rand.uniform(0, range - 1);
            tries += 1;
        }
        out.push(id2);
    }
}

/// A payload length: log-normal with `median` and sigma 1, rounded, within `0..max`
/// (LogNormalDistribution with LinkBench's sigmas).
pub(super) fn payload_len(rand: &mut Rand, median: f64, max: u64) -> usize {
    let z = gaussian(rand);
    let len = (z + median.ln()).exp().round();
    (len.max(0.0) as u64).min(max - 1) as usize
}

/// A standard normal draw (Box-Muller).
fn gaussian(rand: &mut Rand) -> f64 {
    let u1 = 1.0 - rand.unit();
    let u2 = rand.unit();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_gives_javas_numbers() {
        // What Java 17 printed: new java.util.Random(42).nextInt(100) x 5, nextInt(1 << 10);
        // and the first rotations of the out-degree shuffle of a million nodes
        // (new Random(20343988438726021L).nextInt(1000000 / 1024) x 3).
        let mut r = JavaRandom::new(42);
        let got: Vec<i32> = (0..5).map(|_| r.next_int(100)).collect();
        assert_eq!(got, [30, 63, 48, 84, 70]);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int(1024), 745);
        let s = Shuffler::new(LINKS_SEED, 1_000_000);
        assert_eq!(s.rotations[..3], [380, 500, 670]);
    }

    #[test]
    fn the_shuffle_places_ids_where_the_originals_does() {
        // What the original's InvertibleShuffler gave under Java 17 (seed 20343988438726021,
        // 1,024 groups): (permute, invert) of 0, 1, 2, 1023, 1500 mod n and n - 1.
        for (n, expected) in [
            (
                3000,
                [
                    (1024, 2048),
                    (1025, 2049),
                    (2, 2),
                    (2047, 2047),
                    (2524, 476),
                    (951, 1975),
                ],
            ),
            (
                1_000_000,
                [
                    (389_120, 611_328),
                    (512_001, 488_449),
                    (686_082, 314_370),
                    (490_495, 510_975),
                    (681_436, 322_012),
                    (596_543, 403_007),
                ],
            ),
        ] {
            let s = Shuffler::new(LINKS_SEED, n);
            for (i, want) in [0, 1, 2, 1023, 1500 % n, n - 1].into_iter().zip(expected) {
                assert_eq!((s.permute(i), s.invert(i)), want, "n {n}, {i}");
            }
        }
    }

    #[test]
    fn the_shuffle_is_a_permutation_and_its_inverse_undoes_it() {
        for n in [1, 7, 1000, 1024, 5000, 100_003] {
            let s = Shuffler::new(LINKS_SEED, n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = s.permute(i);
                assert!(j < n && !seen[j as usize], "n {n} i {i} -> {j}");
                seen[j as usize] = true;
                assert_eq!(s.invert(j), i, "n {n}");
                // Each id keeps its group.
                assert_eq!(j % s.groups, i % s.groups);
            }
        }
    }

    #[test]
    fn degrees_follow_the_file_and_the_split_is_the_originals() {
        let dir = std::env::temp_dir().join(format!("dbsweep-dist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("Distribution.dat");
        // A made-up distribution in the file's format: 50% none, 30% one, 20% five.
        std::fs::write(
            &file,
            "nlinks\n0 50.0\n1 80.0\n5 100.0\nlink_nreads\n0 90\n3 100\n",
        )
        .unwrap();
        let d = Degrees::measured(&file, 1000).unwrap();
        let mut by_value = [0u64; 6];
        for id in 1..=1000 {
            by_value[d.total(id) as usize] += 1;
        }
        assert_eq!((by_value[0], by_value[1], by_value[5]), (500, 300, 200));
        // calcLinkCount: 1 link -> type 1 has 1, type 2 none; 5 -> 3 and 3 (the original's
        // "left over" is 5 - 2, not 5 % 2).
        let one = (1..=1000).find(|&id| d.total(id) == 1).unwrap();
        assert_eq!((d.of_type(one, 1), d.of_type(one, 2)), (1, 0));
        let five = (1..=1000).find(|&id| d.total(id) == 5).unwrap();
        assert_eq!((d.of_type(five, 1), d.of_type(five, 2)), (3, 3));
        assert_eq!(d.loaded_links(), 300 + 200 * 6);
        for (text, says) in [
            ("link_nreads\n0 100\n", "no nlinks section"),
            ("nlinks\n0 50\n1 90\n", "ends at 90.0000%"),
            ("nlinks\n0 50\n0 90\n", "line 3"),
            ("nlinks\n0 fifty\n", "'fifty' is not a percentage"),
        ] {
            std::fs::write(&file, text).unwrap();
            let e = Degrees::measured(&file, 10).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_zipf_quantile_is_grays_with_the_most_popular_first() {
        let z = GrayZipf::new(1_000_000, 0.8);
        assert_eq!(z.quantile(0.0), 0);
        let mut rand = Rand::for_thread(1, 0);
        let draws: Vec<u64> = (0..100_000).map(|_| z.quantile(rand.unit())).collect();
        assert!(draws.iter().all(|&r| r < 1_000_000));
        let top = draws.iter().filter(|&&r| r == 0).count() as f64 / 1e5;
        // The first rank's share is 1 / zetan.
        let expected = 1.0 / harmonic(1_000_000, 0.8);
        assert!((top - expected).abs() < 0.004, "{top} vs {expected}");
    }

    #[test]
    fn payload_lengths_are_log_normal_with_the_medians() {
        let mut rand = Rand::for_thread(3, 0);
        for (median, max) in [(8.0, 255), (128.0, 1 << 20)] {
            let mut v: Vec<usize> = (0..20_001)
                .map(|_| payload_len(&mut rand, median, max))
                .collect();
            v.sort_unstable();
            let m = v[10_000] as f64;
            assert!((m - median).abs() <= median * 0.05 + 1.0, "{m} vs {median}");
            assert!(*v.last().unwrap() < max as usize);
            // sigma 1: a tenth above median * e^1.28.
            let p90 = v[18_000] as f64;
            assert!((p90 / median - 3.6).abs() < 0.4, "{p90}");
        }
    }
}
