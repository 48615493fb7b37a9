//! The clients' latency histograms: HDR's layout at dbsweep's bounds (1 ns to one hour, 3
//! significant digits: the same buckets, so the same values and quantiles), with the counts in
//! pages made when a value first falls in them.
//!
//! Why not `hdrhistogram::Histogram` here: it holds every count of its range (33,792 of them,
//! 270 KB), and a client keeps one for its events and one per transaction type and statement
//! kind, twice (its recorder and the reporter's spare): 3.2 MB per client of oltp_read_write,
//! 1 MB per command of a pgbench script with `-r`. A client's latencies fall in a few octaves,
//! so a few pages of 128 counts hold them: the bench `sqlite_limit` prints the resident
//! memory per client thread at 1,000 threads against its 300 KB target. Results files, merges
//! and reports keep the crate's histogram ([`Hist::to_hdr`] gives it, count for count).

use hdrhistogram::Histogram;

use super::{HIST_MAX_NS, new_histogram};

/// Counts per page (1 KB of them).
const PAGE: usize = 128;
/// HDR's layout for 3 significant digits from 1: 2,048 sub-buckets, the upper half of each
/// bucket used past the first.
const HALF_MAGNITUDE: u32 = 10;
const HALF: usize = 1 << HALF_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (2 * HALF as u64) - 1;
const LEADING_ZERO_BASE: u32 = 64 - HALF_MAGNITUDE - 1;

/// Buckets needed to cover the highest value, as HDR counts them.
const fn buckets() -> usize {
    let mut smallest_untrackable = 2 * HALF as u64;
    let mut buckets = 1;
    while smallest_untrackable <= HIST_MAX_NS {
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    buckets
}

/// The number of counts: HDR's `distinct_values` at these bounds.
const LEN: usize = (buckets() + 1) << HALF_MAGNITUDE;
const PAGES: usize = LEN.div_ceil(PAGE);

/// The count's index of `value`, as HDR computes it (past the last count for values beyond
/// the range).
#[inline]
fn index_of(value: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << HALF_MAGNITUDE) + sub_bucket - HALF
}

/// The lowest value of the count at `index`.
fn value_of(index: usize) -> u64 {
    let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
    let sub_bucket = (index & (HALF - 1)) + HALF;
    if bucket < 0 {
        (sub_bucket - HALF) as u64
    } else {
        (sub_bucket as u64) << bucket
    }
}

/// A latency histogram in nanoseconds; see the module's comment.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    /// For each page of the counts, its place in `pages` plus one (0: none yet); empty until
    /// the first value.
    dir: Box<[u16]>,
    /// Exactly as many as made (a page's place never changes, the vector may move).
    pages: Vec<[u64; PAGE]>,
    total: u64,
}

/// What a client's histogram holds, about (its directory and 8 pages), for estimates of a
/// run's memory before it starts.
pub const EXPECTED_BYTES: u64 = (PAGES * 2 + 8 * PAGE * 8) as u64;

impl Hist {
    pub fn new() -> Hist {
        Hist::default()
    }

    /// Records `value`, clamped to the range as HDR's `saturating_record` clamps it.
    #[inline]
    pub fn saturating_record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    /// Records `count` values of `value`, clamped to the range.
    #[inline]
    pub fn record_n(&mut self, value: u64, count: u64) {
        let mut index = index_of(value);
        if index >= LEN {
            index = index_of(HIST_MAX_NS);
        }
        // The hot path: the page is there (a directory not yet made reads as no page).
        match self.dir.get(index / PAGE) {
            Some(&slot) if slot != 0 => {
                let c = &mut self.pages[usize::from(slot) - 1][index % PAGE];
                *c = c.saturating_add(count);
            }
            _ => self.record_on_new_page(index, count),
        }
        self.total = self.total.saturating_add(count);
    }

    /// Records into a page made for it (and the directory, at the first value).
    #[cold]
    #[inline(never)]
    fn record_on_new_page(&mut self, index: usize, count: u64) {
        let c = &mut self.page(index / PAGE)[index % PAGE];
        *c = c.saturating_add(count);
    }

    /// Page `p`, made if it is not there.
    #[inline]
    fn page(&mut self, p: usize) -> &mut [u64; PAGE] {
        if self.dir.is_empty() {
            self.dir = vec![0; PAGES].into_boxed_slice();
        }
        let slot = match self.dir[p] {
            0 => {
                self.pages.reserve_exact(1);
                self.pages.push([0; PAGE]);
                // At most PAGES (264) pages: the place fits a u16.
                self.dir[p] = self.pages.len() as u16;
                self.pages.len() - 1
            }
            s => usize::from(s) - 1,
        };
        &mut self.pages[slot]
    }

    /// The pages that hold counts: (page number, counts).
    fn pages(&self) -> impl Iterator<Item = (usize, &[u64; PAGE])> {
        self.dir
            .iter()
            .enumerate()
            .filter(|(_, s)| **s != 0)
            .map(|(p, s)| (p, &self.pages[usize::from(*s) - 1]))
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Hist) {
        if other.total == 0 {
            return;
        }
        for (p, counts) in other.pages() {
            let page = self.page(p);
            for (a, b) in page.iter_mut().zip(counts) {
                *a = a.saturating_add(*b);
            }
        }
        self.total = self.total.saturating_add(other.total);
    }

    /// Adds HDR's histogram `h` of dbsweep's bounds.
    pub fn add_hdr(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            self.record_n(v.value_iterated_to(), v.count_at_value());
        }
    }

    /// Empties it, keeping its pages (zeroed) for the next values.
    pub fn reset(&mut self) {
        if self.total == 0 {
            return;
        }
        for page in &mut self.pages {
            page.fill(0);
        }
        self.total = 0;
    }

    /// The values recorded: (each count's lowest value, its count), lowest first.
    pub fn recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pages().flat_map(|(p, counts)| {
            counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(move |(i, c)| (value_of(p * PAGE + i), *c))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The values recorded.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// The bytes its counts and directory take.
    pub fn heap_bytes(&self) -> u64 {
        (self.dir.len() * 2 + self.pages.len() * PAGE * 8) as u64
    }

    /// The same values in HDR's histogram of dbsweep's bounds, count for count.
    pub fn to_hdr(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for (p, counts) in self.pages() {
            for (i, &c) in counts.iter().enumerate() {
                if c > 0 {
                    h.saturating_record_n(value_of(p * PAGE + i), c);
                }
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn its_layout_is_hdrs_at_dbsweeps_bounds() {
        assert_eq!(LEN, new_histogram().distinct_values());
        // Every value maps where HDR puts it: the lowest value of each count is the count's
        // own, and the value below it belongs to the count before.
        for index in 1..LEN {
            let v = value_of(index);
            assert_eq!(index_of(v), index, "value {v}");
            assert_eq!(index_of(v - 1), index - 1, "value {}", v - 1);
        }
    }

    #[test]
    fn it_holds_what_hdr_holds_count_for_count() {
        // Values over the whole range and past it (clamped as HDR clamps them), recorded one
        // by one and in batches, added from other histograms and reset in between.
        let mut rng = SmallRng::seed_from_u64(7);
        let mut ours = Hist::new();
        let mut hdr = new_histogram();
        let mut other = Hist::new();
        for round in 0..4 {
            for _ in 0..20_000 {
                let shift = rng.random::<u64>() % 64;
                let v = rng.random::<u64>() >> shift;
                let n = 1 + rng.random::<u64>() % 3;
                ours.record_n(v, n);
                hdr.saturating_record_n(v, n);
                other.saturating_record(v / 3);
                hdr.saturating_record(v / 3);
            }
            ours.add(&other);
            other.reset();
            assert!(other.is_empty());
            assert_eq!(ours.to_hdr(), hdr, "round {round}");
            assert_eq!(ours.len(), hdr.len());
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(ours.to_hdr().value_at_quantile(q), hdr.value_at_quantile(q));
            }
        }
        let mut back = Hist::new();
        back.add_hdr(&hdr);
        assert_eq!(back.to_hdr(), hdr);
        // A recorder's latencies, a few octaves wide, take a few pages, not HDR's 270 KB.
        let mut point_select = Hist::new();
        for _ in 0..100_000 {
            point_select.saturating_record(20_000 + rng.random::<u64>() % 200_000);
        }
        assert!(
            point_select.heap_bytes() < 40_000,
            "{}",
            point_select.heap_bytes()
        );
        assert!(new_histogram().distinct_values() * 8 > 250_000);
    }
}
