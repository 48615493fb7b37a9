//! A C test's command line as sysbench reads it: its own options over their defaults, the
//! general options that limit a run, and sysbench's refusal of any other.

use super::help::{self, Kind, Opt};

/// sysbench's words for an option it refuses.
pub struct Refused(pub String);

/// The general options that bound a C test's run.
#[derive(Clone, Debug)]
pub struct Limits {
    pub threads: u32,
    /// 0: no limit.
    pub events: u64,
    /// Seconds; 0: no limit.
    pub time: f64,
    /// Seconds between interval lines; 0: none.
    pub report_interval: f64,
    /// `--rand-seed` (0: the time).
    pub rand_seed: u64,
    /// `--rate`: events per second arriving at random (0: as fast as the threads go).
    pub rate: f64,
}

/// The test's options: each name's value, given or default.
pub struct Values {
    given: Vec<(&'static str, Kind, String)>,
}

impl Values {
    /// Reads `rest` against the test's `options` and sysbench's general ones.
    pub fn read(options: &'static [Opt], rest: &[String]) -> Result<(Values, Limits), Refused> {
        let mut given: Vec<(&'static str, Kind, String)> = options
            .iter()
            .map(|(n, k, _, d)| (*n, *k, d.unwrap_or("").to_string()))
            .collect();
        let mut limits = Limits {
            threads: 1,
            events: 0,
            time: 10.0,
            report_interval: 0.0,
            rand_seed: 0,
            rate: 0.0,
        };
        for word in rest {
            let invalid = || Refused(format!("invalid option: {word}"));
            let Some(body) = word.strip_prefix("--") else {
                return Err(invalid());
            };
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n.replace('_', "-"), Some(v)),
                None => (body.replace('_', "-"), None),
            };
            let number = |v: Option<&str>| -> Result<f64, Refused> {
                v.and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .ok_or_else(|| Refused(format!("FATAL: Invalid value for {name}: {word}")))
            };
            match name.as_str() {
                "threads" => {
                    limits.threads = number(value)?.max(1.0).min(f64::from(u16::MAX)) as u32;
                }
                "events" => limits.events = number(value)? as u64,
                "time" => limits.time = number(value)?,
                "report-interval" => limits.report_interval = number(value)?,
                "rand-seed" => limits.rand_seed = number(value)? as u64,
                "rate" => limits.rate = number(value)?,
                n => {
                    if let Some(slot) = given.iter_mut().find(|(o, _, _)| *o == n) {
                        slot.2 = match (slot.1, value) {
                            (Kind::Bool, None) => "on".into(),
                            (_, v) => v.unwrap_or("").to_string(),
                        };
                    } else if !help::general_names().any(|g| g == n) {
                        return Err(invalid());
                    }
                }
            }
        }
        Ok((Values { given }, limits))
    }

    /// The option's text as given (or its default).
    pub fn text(&self, name: &str) -> &str {
        self.given
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or("", |(_, _, v)| v.as_str())
    }

    /// A number option; None where its text is no whole number.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.text(name).trim().parse().ok()
    }

    /// A size option (`4K`, `1G`, `16384`), in bytes, as sysbench reads sizes: a number and an
    /// optional unit of K, M, G or T (powers of 1024); None where it is no size.
    pub fn size(&self, name: &str) -> Option<u64> {
        size(self.text(name))
    }

    /// An on/off option.
    pub fn flag(&self, name: &str) -> bool {
        matches!(
            self.text(name).to_ascii_lowercase().as_str(),
            "on" | "true" | "yes" | "1"
        )
    }

    /// A list option's items.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.text(name)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }
}

/// A size in bytes: digits and an optional unit (b, K, M, G, T; either case).
pub fn size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().ok()?;
    let shift = match t[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_sysbenchs_units_and_refuse_signs_and_other_words() {
        assert_eq!(size("4K"), Some(4096));
        assert_eq!(size("1G"), Some(1 << 30));
        assert_eq!(size("16384"), Some(16384));
        assert_eq!(size("2m"), Some(2 << 20));
        assert_eq!(size("-1"), None);
        assert_eq!(size("1X"), None);
        assert_eq!(size(""), None);
        assert_eq!(size("99999999999T"), None);
    }

    #[test]
    fn a_word_neither_the_tests_nor_sysbenchs_is_refused_in_sysbenchs_words() {
        const OPTS: &[Opt] = &[("cpu-max-prime", Kind::Num, "limit", Some("10000"))];
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let (v, l) = Values::read(
            OPTS,
            &words("--cpu-max-prime=7 --threads=2 --mysql-host=x --events=5"),
        )
        .ok()
        .unwrap();
        assert_eq!(v.int("cpu-max-prime"), Some(7));
        assert_eq!((l.threads, l.events, l.time), (2, 5, 10.0));
        match Values::read(OPTS, &words("--invalid-option")) {
            Err(Refused(s)) => assert_eq!(s, "invalid option: --invalid-option"),
            Ok(_) => panic!("taken"),
        }
    }
}
