//! How busy the machine was beside a step: the CPU of processes other than the client and the
//! server, and the hypervisor's steal, judged against the limits of a busy machine with the
//! allowance a short step's few clock ticks need.

use super::procfs::ticks_per_second;
use crate::results::figures::{Beside, HwFigures};

/// The shortest step whose CPU beside it is judged: some forty-five clock ticks per CPU (a
/// half-second step's sampler sees a little less than its half second).
const BESIDE_LEAST_S: f64 = 0.45;
/// The clock ticks by which the machine's and the processes' sampled CPU times, together, may
/// miss the time really spent: the judgement of a short step allows for them.
const TICKS_UNSURE: f64 = 4.0;

/// How busy the machine was beside the run: its busy CPU less the client's and the server's
/// (known processes), and the steal.
pub(super) fn beside(f: &HwFigures, all_known: bool, secs: f64) -> Beside {
    let c = &f.cpu_pct;
    if secs < BESIDE_LEAST_S {
        // A few clock ticks cannot tell the machine's CPU from the processes': nothing said.
        return Beside::of(None, 0.0);
    }
    let cpus = f.cpus.max(1) as f64;
    let ours = c.client_user
        + c.client_system
        + c.server_user.unwrap_or(0.0)
        + c.server_system.unwrap_or(0.0);
    let others = all_known.then(|| (c.machine_user + c.machine_system - ours / cpus).max(0.0));
    let unsure = TICKS_UNSURE * 100.0 / (ticks_per_second() * secs * cpus);
    Beside::judged(others, c.machine_steal, unsure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::figures::CpuPct;

    #[test]
    fn a_short_step_is_judged_busy_only_beyond_its_few_ticks() {
        use crate::results::figures::BUSY_OTHERS_PCT;
        // Two CPUs; the client one core's half (25% of the machine), the machine 25% + others.
        let step = |others: f64, secs: f64| {
            let f = HwFigures {
                cpus: 2,
                cpu_pct: CpuPct {
                    machine_user: 25.0 + others,
                    client_user: 50.0,
                    ..CpuPct::default()
                },
                ..HwFigures::default()
            };
            beside(&f, true, secs)
        };
        let tick = 100.0 / ticks_per_second();
        // Half a second: 4 ticks are 4 x tick / 1 % of two CPUs' 100 ticks.
        let unsure = 4.0 * tick;
        assert!(!step(BUSY_OTHERS_PCT + unsure - 0.5, 0.5).busy);
        assert!(step(BUSY_OTHERS_PCT + unsure + 0.5, 0.5).busy);
        assert_eq!(step(20.0, 0.5).others_pct, Some(20.0));
        // Ten seconds: the limit itself, within a fifth of a percent.
        assert!(step(BUSY_OTHERS_PCT + 0.3, 10.0).busy);
        // Shorter than half a second: nothing said.
        let short = step(50.0, 0.4);
        assert!(!short.busy && short.others_pct.is_none());
    }
}
