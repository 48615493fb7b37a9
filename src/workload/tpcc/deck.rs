//! The TPC-C transaction mix's terms (clauses 2.4 to 2.8, 5.2, 5.2.5): the transaction types,
//! the least shares and the deck that deals them, the keying and think times, the
//! response-time limits, and a mix (`--mix`) with its cycle and its New-Order ceiling. Nothing
//! here depends on the workload's options: the options hold a [`Mix`].

/// New-Order transactions per minute that ten terminals of one warehouse reach at most with
/// the specification's keying and think times and its least mix: each terminal's mean cycle
/// (keying + mean think, over the mix: 0.45 x 30 + 0.43 x 15 + 0.04 x (12 + 7 + 7) = 20.99 s)
/// gives 60 / 20.99 x 0.45 New-Orders a minute, x 10 terminals.
pub const NOPM_CEILING_PER_WAREHOUSE: f64 = 12.86;

/// The transaction types, in the order the runner and the results list them.
pub const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;

/// Cards of each type in a deck of 100: Payment 43%, Order-Status, Delivery and Stock-Level 4%
/// each (the specification's minimums), New-Order the rest.
pub const DECK: [u32; 5] = crate::results::figures::TPCC_LEAST_MIX;
/// The specification's least share of each type (clause 5.2.3); New-Order has none (it is
/// what the others leave).
pub const MINIMUM: [u32; 5] = [0, 43, 4, 4, 4];

/// The five transactions' shares in percent (`--mix`), in [`KINDS`] order, adding up to 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mix(pub [u32; 5]);

impl Default for Mix {
    fn default() -> Mix {
        Mix(DECK)
    }
}

impl Mix {
    /// `--mix`'s value: five whole percentages in [`KINDS`] order (`50,50,0,0,0`), or
    /// `TYPE=PCT` pairs (`new_order=50,payment=50`; a type left out has none); they add up
    /// to 100.
    pub fn parse(s: &str) -> Result<Mix, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let mut shares = [0u32; 5];
        let pct = |v: &str| {
            v.parse::<u32>()
                .ok()
                .filter(|n| *n <= 100)
                .ok_or_else(|| format!("'{v}' is not a whole percentage from 0 to 100"))
        };
        if parts.iter().all(|p| !p.contains('=')) {
            if parts.len() != 5 {
                return Err(format!(
                    "'{s}': give five percentages ({}) or TYPE=PCT pairs",
                    KINDS.join(",")
                ));
            }
            for (share, p) in shares.iter_mut().zip(&parts) {
                *share = pct(p)?;
            }
        } else {
            let mut given = [false; 5];
            for p in &parts {
                let (name, v) = p
                    .split_once('=')
                    .ok_or_else(|| format!("'{p}' is not TYPE=PCT"))?;
                let i = KINDS
                    .iter()
                    .position(|k| *k == name.trim())
                    .ok_or_else(|| {
                        format!("'{name}' is not a TPC-C transaction ({})", KINDS.join(", "))
                    })?;
                if std::mem::replace(&mut given[i], true) {
                    return Err(format!("'{s}' gives {} twice", KINDS[i]));
                }
                shares[i] = pct(v.trim())?;
            }
        }
        let sum: u32 = shares.iter().sum();
        if sum != 100 {
            return Err(format!("'{s}' adds up to {sum}%, not 100%"));
        }
        Ok(Mix(shares))
    }

    /// The types below the specification's least share, as `payment 30% < 43%`.
    pub fn below_minimums(&self) -> Vec<String> {
        KINDS
            .iter()
            .zip(self.0.iter().zip(MINIMUM))
            .filter(|(_, (s, m))| *s < m)
            .map(|(k, (s, m))| format!("{k} {s}% < {m}%"))
            .collect()
    }

    /// A terminal's mean cycle with the specification's keying and mean think times.
    pub fn mean_cycle_s(&self) -> f64 {
        self.0
            .iter()
            .enumerate()
            .map(|(i, s)| f64::from(*s) / 100.0 * (KEYING_S[i] + THINK_S[i]))
            .sum()
    }

    /// New-Orders a minute that ten terminals reach at most with the specification's pacing:
    /// 12.86 for its least mix (see [`NOPM_CEILING_PER_WAREHOUSE`]).
    pub fn nopm_ceiling_per_warehouse(&self) -> f64 {
        if *self == Mix::default() {
            // The figure as the specification's readers quote it (12.863, rounded).
            return NOPM_CEILING_PER_WAREHOUSE;
        }
        10.0 * 60.0 / self.mean_cycle_s() * f64::from(self.0[NEW_ORDER]) / 100.0
    }
}
/// Keying and mean think times in seconds (clause 5.2.5.7), by type.
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
pub const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];
/// The 90th-percentile response-time limits in seconds (clause 5.2.5.3), by type.
pub const LIMIT_P90_S: [f64; 5] = [5.0, 5.0, 5.0, 5.0, 20.0];
