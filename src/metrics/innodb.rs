//! InnoDB's own word on its latches over a step: the SEMAPHORES section of SHOW ENGINE INNODB
//! STATUS (the OS wait array's reservations and signals, spins, rounds and OS waits of the
//! rw-locks, and the threads waiting long on a semaphore) and SHOW ENGINE INNODB MUTEX's OS
//! waits per latch, where the server has them (MySQL 5.x and 8.0; MariaDB 10.6 and later
//! print the section's heading and little else, and their per-latch figures come from
//! performance_schema instead).

use std::collections::BTreeMap;

use crate::db::{Conn, DbError};
use crate::results::diagnosis::{MutexWaits, Semaphores};

/// Latches kept per step.
const TOP_MUTEXES: usize = 10;

/// One reading of the counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    reservations: Option<u64>,
    signals: Option<u64>,
    rw_os_waits: BTreeMap<String, u64>,
    long_waits: u64,
    mutexes: BTreeMap<String, u64>,
}

/// The number after `label` in `line`, if there is one.
fn number_after(line: &str, label: &str) -> Option<u64> {
    let rest = &line[line.find(label)? + label.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The SEMAPHORES section of SHOW ENGINE INNODB STATUS's text: the lines between its heading
/// and the next section's.
fn semaphores_section(status: &str) -> Vec<&str> {
    let mut lines = status.lines().peekable();
    let mut out = Vec::new();
    while let Some(l) = lines.next() {
        if l.trim() == "SEMAPHORES" {
            // The dashes under the heading.
            lines.next_if(|l| l.starts_with("---"));
            for l in lines.by_ref() {
                // The next section: its dashes, then its heading.
                if l.starts_with("------------") {
                    return out;
                }
                out.push(l);
            }
        }
    }
    out
}

/// The counters in the SEMAPHORES section of `status`.
pub fn parse_status(status: &str) -> Reading {
    let mut r = Reading::default();
    for line in semaphores_section(status) {
        if let Some(n) = number_after(line, "reservation count") {
            r.reservations = Some(n);
        }
        if let Some(n) = number_after(line, "signal count") {
            r.signals = Some(n);
        }
        if let Some(kind) = line.trim_start().strip_prefix("RW-")
            && let Some(kind) = kind.split_whitespace().next()
            && let Some(n) = number_after(line, "OS waits")
        {
            r.rw_os_waits.insert(kind.to_ascii_lowercase(), n);
        }
        if line.contains("has waited at") {
            r.long_waits += 1;
        }
    }
    r
}

/// Reads the counters from the server (SHOW ENGINE INNODB STATUS, and SHOW ENGINE INNODB
/// MUTEX where it answers).
pub fn read(conn: &mut dyn Conn) -> Result<Reading, DbError> {
    let mut status = String::new();
    conn.simple("SHOW ENGINE INNODB STATUS", &mut |row| {
        if let Some(text) = row.get(2) {
            status = String::from_utf8_lossy(text).into_owned();
        }
    })?;
    let mut r = parse_status(&status);
    // Rows (Type, Name, Status) with Status `os_waits=N`; servers without it answer nothing
    // or an error, which leaves the mutexes out rather than failing the profile.
    let mut mutexes = BTreeMap::new();
    let answered = conn.simple("SHOW ENGINE INNODB MUTEX", &mut |row| {
        let name = row.get(1).map(String::from_utf8_lossy).unwrap_or_default();
        let waits = row
            .get(2)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| number_after(s, "os_waits="));
        if let Some(n) = waits {
            *mutexes.entry(name.into_owned()).or_insert(0) += n;
        }
    });
    if answered.is_ok() {
        r.mutexes = mutexes;
    }
    Ok(r)
}

/// The change from `before` to `after`.
pub fn delta(before: &Reading, after: &Reading) -> Semaphores {
    let sub = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    let mut mutexes: Vec<MutexWaits> = after
        .mutexes
        .iter()
        .map(|(name, n)| MutexWaits {
            name: name.clone(),
            os_waits: n.saturating_sub(before.mutexes.get(name).copied().unwrap_or(0)),
        })
        .filter(|m| m.os_waits > 0)
        .collect();
    mutexes.sort_by(|a, b| b.os_waits.cmp(&a.os_waits).then(a.name.cmp(&b.name)));
    mutexes.truncate(TOP_MUTEXES);
    Semaphores {
        reservations: sub(before.reservations, after.reservations),
        signals: sub(before.signals, after.signals),
        rw_os_waits: after
            .rw_os_waits
            .iter()
            .map(|(k, n)| {
                let was = before.rw_os_waits.get(k).copied().unwrap_or(0);
                (k.clone(), n.saturating_sub(was))
            })
            .collect(),
        long_waits_at_end: after.long_waits,
        mutexes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SEMAPHORES section in the layout MySQL 5.7 prints (numbers made up).
    const MYSQL_57: &str = "\
=====================================
BACKGROUND THREAD
-----------------
srv_master_thread loops: 10 srv_active, 0 srv_shutdown, 5 srv_idle
----------
SEMAPHORES
----------
OS WAIT ARRAY INFO: reservation count 1234
OS WAIT ARRAY INFO: signal count 1100
--Thread 140 has waited at btr0sea.cc line 1100 for 2.00 seconds the semaphore:
RW-shared spins 500, rounds 900, OS waits 40
RW-excl spins 300, rounds 7000, OS waits 210
RW-sx spins 3, rounds 60, OS waits 1
Spin rounds per wait: 1.80 RW-shared, 23.33 RW-excl, 20.00 RW-sx
------------
TRANSACTIONS
------------
Trx id counter 5000
";

    #[test]
    fn the_semaphores_section_is_read_and_differenced() {
        let after = parse_status(MYSQL_57);
        assert_eq!(after.reservations, Some(1234));
        assert_eq!(after.signals, Some(1100));
        assert_eq!(after.rw_os_waits["excl"], 210);
        assert_eq!(after.rw_os_waits["sx"], 1);
        assert_eq!(after.long_waits, 1);
        let before = parse_status(
            &MYSQL_57
                .replace("1234", "1000")
                .replace("OS waits 210", "OS waits 10"),
        );
        let d = delta(&before, &after);
        assert_eq!(d.reservations, Some(234));
        assert_eq!(d.signals, Some(0));
        assert_eq!(d.rw_os_waits["excl"], 200);
        assert_eq!(d.rw_os_waits["shared"], 0);
        // MariaDB 10.11 prints the heading and nothing under it.
        let maria =
            "----------\nSEMAPHORES\n----------\n------------\nTRANSACTIONS\n------------\n";
        assert_eq!(parse_status(maria), Reading::default());
    }
}
