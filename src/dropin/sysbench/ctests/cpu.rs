//! sysbench's `cpu` test: each event counts the primes below `--cpu-max-prime` by trial
//! division, as sysbench's does.

use super::engine::{self, Limits, Test};
use super::help::{Kind, Opt};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};

pub const OPTIONS: &[Opt] = &[(
    "cpu-max-prime",
    Kind::Num,
    "upper limit for primes generator",
    Some("10000"),
)];

struct Cpu {
    max_prime: u64,
}

impl Test for Cpu {
    fn report(&self, m: &engine::Measured) -> String {
        format!(
            "CPU speed:\n    events per second: {:8.2}\n",
            m.per_second(m.events as f64)
        )
    }
    type Local = ();
    fn local(&self, _thread: u32) {}
    fn next(&self, _local: &mut ()) -> bool {
        true
    }
    fn execute(&self, _local: &mut ()) -> Result<(), String> {
        std::hint::black_box(primes_below(std::hint::black_box(self.max_prime)));
        Ok(())
    }
}

/// The primes from 3 below `max`, by trial division up to the square root.
fn primes_below(max: u64) -> u64 {
    let mut n = 0;
    for c in 3..max {
        let t = (c as f64).sqrt();
        let mut l = 2u64;
        while (l as f64) <= t {
            if c % l == 0 {
                break;
            }
            l += 1;
        }
        if (l as f64) > t {
            n += 1;
        }
    }
    n
}

pub fn run(v: &Values, limits: &Limits, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let max_prime = match v.int("cpu-max-prime") {
        Some(n) if n > 0 && n <= i64::from(i32::MAX) => n as u64,
        _ => {
            return fatal(&format!(
                "Invalid value of cpu-max-prime: {}.",
                v.text("cpu-max-prime")
            ));
        }
    };
    engine::header(
        limits,
        style,
        &format!("Prime numbers limit: {max_prime}\n\n"),
    );
    let m = engine::run(&Cpu { max_prime }, limits, style);
    engine::finish(&Cpu { max_prime }, &m, style)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_primes_below_a_limit_are_counted_from_three() {
        // 3 5 7 11 13 17 19 23 29 (2 is not counted, as in sysbench's loop).
        assert_eq!(super::primes_below(30), 9);
        assert_eq!(super::primes_below(3), 0);
    }
}
