//! Load that changes over time (`--phases`): a run's measured part cut into phases, each with
//! its own open-loop rate (steady, or a ramp from one rate to another) or, closed loop, its own
//! number of active clients. The clients' schedules ask it for the rate at an instant; the
//! reporter asks it which phase an interval belongs to.

use std::fmt::Write as _;

/// How paced events arrive (`--arrivals`): evenly spaced at each client's share of the rate,
/// or at exponentially drawn gaps of that mean (a Poisson process, as independent users make).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    #[default]
    Uniform,
    Poisson,
}

/// What a phase asks of the clients.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// Events per second in all, the same all through the phase (0: a pause).
    Rate(f64),
    /// Events per second rising (or falling) evenly from the first to the second.
    Ramp(f64, f64),
    /// Closed loop: this many clients run events back to back, the others wait.
    Clients(u32),
}

/// One phase: its length and its load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    pub seconds: f64,
    pub load: Load,
}

/// The phases of a run, in order from the start of the measured part.
#[derive(Clone, Debug, PartialEq)]
pub struct Phases(Vec<Phase>);

/// The most phases a run may have (each its own figures in the results file).
const MAX_PHASES: usize = 1000;

/// The shortest phase: its events are told from its neighbours' to about 1%.
const MIN_PHASE_S: f64 = 0.1;

impl Phases {
    /// `--phases`' value: `DURATION@LOAD` phases separated by commas, where DURATION is
    /// seconds (`60`, `60s`, `2m`) and LOAD is a rate in events/s (`100`), a ramp
    /// (`ramp:200..1000`) or a number of clients (`clients:8`). A run's phases are all rates
    /// and ramps (open loop) or all client counts (closed loop).
    pub fn parse(s: &str) -> Result<Phases, String> {
        let mut list = Vec::new();
        for part in s.split(',').map(str::trim) {
            let (d, load) = part
                .split_once('@')
                .ok_or_else(|| format!("'{part}' is not DURATION@LOAD (60s@100)"))?;
            let seconds = duration(d.trim())
                .ok_or_else(|| format!("'{d}' is not a duration (60, 60s, 2m)"))?;
            // The reporter collects at each phase's end, to within its wake-up (a
            // millisecond on a busy machine): a shorter phase's figures would be that error.
            if seconds < MIN_PHASE_S {
                return Err(format!(
                    "'{}': a phase lasts at least {MIN_PHASE_S}s",
                    d.trim()
                ));
            }
            list.push(Phase {
                seconds,
                load: load_of(load.trim())?,
            });
        }
        if list.len() > MAX_PHASES {
            return Err(format!("{} phases: at most {MAX_PHASES}", list.len()));
        }
        let closed = list
            .iter()
            .filter(|p| matches!(p.load, Load::Clients(_)))
            .count();
        if closed != 0 && closed != list.len() {
            return Err(
                "phases are all rates and ramps (open loop) or all client counts (closed loop)"
                    .into(),
            );
        }
        if list
            .iter()
            .all(|p| p.rate_at(0.0) == Some(0.0) && p.rate_at(p.seconds) == Some(0.0))
        {
            return Err("every phase's rate is 0: nothing would run".into());
        }
        let phases = Phases(list);
        // The run's mean rate is what its schedule is built on: said here, as the phases'
        // own, not as a --rate the command line never gave.
        let mean = phases.mean_rate();
        if !phases.closed_loop() && mean < 0.001 {
            return Err(format!(
                "the phases ask for {} events/s on average: at least 0.001",
                crate::cfmt::quoted(mean)
            ));
        }
        Ok(phases)
    }

    pub fn list(&self) -> &[Phase] {
        &self.0
    }

    /// Seconds of all phases: the measured part's length.
    pub fn seconds(&self) -> f64 {
        self.0.iter().map(|p| p.seconds).sum()
    }

    /// Whether the phases are client counts (closed loop).
    pub fn closed_loop(&self) -> bool {
        matches!(self.0.first().map(|p| p.load), Some(Load::Clients(_)))
    }

    /// The most clients a closed-loop phase runs.
    pub fn max_clients(&self) -> u32 {
        self.0
            .iter()
            .filter_map(|p| match p.load {
                Load::Clients(n) => Some(n),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Events the open-loop phases ask for in all, over their seconds: the run's mean rate.
    pub fn mean_rate(&self) -> f64 {
        let events: f64 = self.0.iter().map(Phase::events).sum();
        events / self.seconds().max(1e-9)
    }

    /// The phase at `t` seconds into the measured part (before it: the first; after the last:
    /// the last), and `t`'s place in it.
    pub fn at(&self, t: f64) -> (usize, f64) {
        let mut start = 0.0;
        for (i, p) in self.0.iter().enumerate() {
            if t < start + p.seconds {
                return (i, (t - start).max(0.0));
            }
            start += p.seconds;
        }
        let last = self.0.len() - 1;
        (last, self.0[last].seconds)
    }

    /// Where phase `i` begins, in seconds into the measured part.
    pub fn start_of(&self, i: usize) -> f64 {
        self.0[..i.min(self.0.len())]
            .iter()
            .map(|p| p.seconds)
            .sum()
    }

    /// The rate asked at `t` seconds into the measured part (the warm-up runs the first
    /// phase's), or None for closed-loop phases.
    pub fn rate_at(&self, t: f64) -> Option<f64> {
        let (i, into) = self.at(t);
        self.0[i].rate_at(into)
    }

    /// The clients active at `t` (closed loop), or None for open-loop phases.
    pub fn clients_at(&self, t: f64) -> Option<u32> {
        match self.0[self.at(t).0].load {
            Load::Clients(n) => Some(n),
            _ => None,
        }
    }

    /// The first instant at or after `t` when the rate is above 0 (open loop), or when at
    /// least `client + 1` clients are active (closed loop); None if no phase after `t` has it.
    pub fn next_active(&self, t: f64, client: u32) -> Option<f64> {
        let (first, _) = self.at(t);
        (first..self.0.len()).find_map(|i| {
            let from = self.start_of(i).max(t);
            let p = &self.0[i];
            let active = match p.load {
                Load::Clients(n) => client < n,
                _ => {
                    p.rate_at(from - self.start_of(i)).is_some_and(|r| r > 0.0)
                        || p.rate_at(p.seconds).is_some_and(|r| r > 0.0)
                }
            };
            active.then_some(from)
        })
    }

    /// Events due from the start of the measured part to `t` (open loop; negative `t`, in the
    /// warm-up, at the first phase's rate): the integral of the rate.
    pub fn events_until(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return self.rate_at(0.0).unwrap_or(0.0) * t;
        }
        let (i, into) = self.at(t);
        let done: f64 = self.0[..i].iter().map(Phase::events).sum();
        let p = &self.0[i];
        let now = match p.load {
            Load::Rate(r) => r * into,
            Load::Ramp(a, b) => a * into + (b - a) * into * into / (2.0 * p.seconds),
            Load::Clients(_) => 0.0,
        };
        done + now
    }

    /// The phase as its figures name it: `60s@100/s`, `120s@200..1000/s`, `60s@8 clients`.
    pub fn describe(p: &Phase) -> String {
        let mut s = format!("{}s@", trim(p.seconds));
        let _ = match p.load {
            Load::Rate(r) => write!(s, "{}/s", trim(r)),
            Load::Ramp(a, b) => write!(s, "{}..{}/s", trim(a), trim(b)),
            Load::Clients(1) => write!(s, "1 client"),
            Load::Clients(n) => write!(s, "{n} clients"),
        };
        s
    }
}

impl Phase {
    /// The rate at `t` seconds into the phase (None closed loop).
    pub fn rate_at(&self, t: f64) -> Option<f64> {
        match self.load {
            Load::Rate(r) => Some(r),
            Load::Ramp(a, b) => Some(a + (b - a) * (t / self.seconds).clamp(0.0, 1.0)),
            Load::Clients(_) => None,
        }
    }

    /// The events the phase asks for (open loop).
    pub fn events(&self) -> f64 {
        match self.load {
            Load::Rate(r) => r * self.seconds,
            Load::Ramp(a, b) => (a + b) / 2.0 * self.seconds,
            Load::Clients(_) => 0.0,
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `60`, `60s`, `1.5m`, `1h`: seconds, more than 0 and at most a year.
fn duration(s: &str) -> Option<f64> {
    let (n, unit) = match s.char_indices().last()? {
        (i, 's') => (&s[..i], 1.0),
        (i, 'm') => (&s[..i], 60.0),
        (i, 'h') => (&s[..i], 3600.0),
        _ => (s, 1.0),
    };
    let v = n.parse::<f64>().ok()? * unit;
    (v.is_finite() && v > 0.0 && v <= crate::results::MAX_SECONDS).then_some(v)
}

fn rate(s: &str) -> Result<f64, String> {
    s.trim()
        .trim_end_matches("/s")
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && (0.0..=1e9).contains(r))
        .ok_or_else(|| format!("'{s}' is not a rate in events per second (0 to 1e9)"))
}

fn load_of(s: &str) -> Result<Load, String> {
    if let Some(r) = s.strip_prefix("ramp:") {
        let (a, b) = r
            .split_once("..")
            .ok_or_else(|| format!("'{s}' is not ramp:FROM..TO"))?;
        return Ok(Load::Ramp(rate(a)?, rate(b)?));
    }
    if let Some(n) = s.strip_prefix("clients:") {
        return n
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .map(Load::Clients)
            // The most clients a run may have is the plan's rule, judged with --threads.
            .ok_or_else(|| format!("'{s}': clients:N takes a whole number from 1"));
    }
    rate(s).map(Load::Rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_read_and_asked() {
        let p = Phases::parse("60s@100, 1m@200,120@ramp:200..1000").unwrap();
        assert_eq!(p.seconds(), 240.0);
        assert_eq!(p.rate_at(-5.0), Some(100.0));
        assert_eq!(p.rate_at(59.9), Some(100.0));
        assert_eq!(p.rate_at(60.0), Some(200.0));
        assert_eq!(p.rate_at(180.0), Some(600.0));
        assert_eq!(p.rate_at(500.0), Some(1000.0));
        assert_eq!(p.at(130.0), (2, 10.0));
        // 6,000 + 12,000 + the ramp's 72,000.
        assert!((p.events_until(240.0) - 90_000.0).abs() < 1e-6);
        assert!(
            (p.events_until(180.0) - (18_000.0 + 200.0 * 60.0 + 800.0 * 3600.0 / 240.0)).abs()
                < 1e-6
        );
        assert!((p.mean_rate() - 375.0).abs() < 1e-9);
        assert_eq!(Phases::describe(&p.list()[2]), "120s@200..1000/s");
        assert!(!p.closed_loop());

        let c = Phases::parse("10s@clients:2,10s@clients:8").unwrap();
        assert!(c.closed_loop());
        assert_eq!(c.max_clients(), 8);
        assert_eq!(c.clients_at(12.0), Some(8));
        assert_eq!(c.next_active(3.0, 5), Some(10.0));
        assert_eq!(c.next_active(3.0, 1), Some(3.0));
        assert_eq!(c.next_active(3.0, 9), None);

        let pause = Phases::parse("5@100,5@0,5@50").unwrap();
        assert_eq!(pause.next_active(6.0, 0), Some(10.0));
    }

    #[test]
    fn phases_too_slow_on_average_are_refused_as_phases() {
        let e = Phases::parse("1s@0.001,1s@0").unwrap_err();
        assert_eq!(
            e,
            "the phases ask for 0.0005 events/s on average: at least 0.001"
        );
        assert!(Phases::parse("1s@0.002,1s@0").is_ok());
    }

    #[test]
    fn bad_phases_say_why() {
        for (bad, why) in [
            ("60s", "DURATION@LOAD"),
            ("x@100", "not a duration"),
            ("0s@100", "not a duration"),
            ("0.003s@100", "a phase lasts at least 0.1s"),
            ("10s@fast", "not a rate"),
            ("10s@ramp:5", "ramp:FROM..TO"),
            ("10s@clients:0", "clients:N takes"),
            ("10s@100,10s@clients:2", "all rates and ramps"),
            ("10s@0", "nothing would run"),
        ] {
            let e = Phases::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
