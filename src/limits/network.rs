//! The database connection's own ceilings: the round trip of the least request its protocol
//! has (PostgreSQL's Sync, MySQL's COM_PING: the server parses nothing and plans nothing), and
//! the bandwidth of a large result. For a server on another host they are the network as the
//! queueing model's device: one client can make at most 1 / round trip requests a second.

use std::time::{Duration, Instant};

pub use crate::results::limits::Network;

use crate::db::{self, Dialect, OpenOptions};
use crate::error::Error;

/// The most rows of the large result, each a megabyte.
const RESULT_ROWS: u64 = 64;

/// Probes the connection to `url` for about `seconds`: round trips for most of it, then
/// large results, sized to the link (the best rate counts). None on Ctrl-C before any round trip.
pub fn probe(url: &str, seconds: f64, timeouts: db::Timeouts) -> Result<Option<Network>, Error> {
    let shown = db::redact_url(url);
    let large = |rows: u64| match db::dialect_of(url) {
        Some(Dialect::Postgres) => Some(format!(
            "SELECT repeat('x', 1048576) FROM generate_series(1, {rows})"
        )),
        Some(Dialect::Mysql) => Some(format!(
            "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {rows}) SELECT REPEAT('x', 1048576) FROM s"
        )),
        _ => None,
    };
    if large(1).is_none() {
        return Err(Error::Usage(format!(
            "limits: {shown}: not a server with a network connection to probe"
        )));
    }
    let t = db::open(url, OpenOptions::bounded(timeouts))?;
    let mut c = t
        .connect()
        .map_err(|e| Error::db(format!("limits: connecting to {shown}"), e))?;
    let budget = Duration::from_secs_f64(seconds.max(0.1) * 0.5);
    let start = Instant::now();
    let mut us = Vec::new();
    while start.elapsed() < budget && us.len() < 1_000_000 && !crate::interrupt::interrupted() {
        let t0 = Instant::now();
        c.ping()
            .map_err(|e| Error::db(format!("limits: round trip to {shown}"), e))?;
        us.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    if us.is_empty() {
        return Ok(None);
    }
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
    // A megabyte first, to size the rest: a slow link gets a result it can carry in a fifth
    // of the probe's time, a fast one up to RESULT_ROWS megabytes.
    let mut rows = 1;
    let (mut best, mut bytes) = (0.0f64, 0);
    for _ in 0..4 {
        if crate::interrupt::interrupted() {
            break;
        }
        let sql = large(rows).expect("a server's dialect");
        let t0 = Instant::now();
        let got = c
            .simple(&sql, &mut |_| {})
            .map_err(|e| Error::db(format!("limits: a large result from {shown}"), e))?;
        let s = t0.elapsed().as_secs_f64();
        if got.rows != rows || s <= 0.0 {
            break;
        }
        let mb_s = (rows << 20) as f64 / 1e6 / s;
        if mb_s > best {
            (best, bytes) = (mb_s, rows << 20);
        }
        let fits = (mb_s * 1e6 * seconds.max(0.1) * 0.2 / f64::from(1 << 20)) as u64;
        rows = fits.clamp(1, RESULT_ROWS);
    }
    Ok(Some(Network {
        target: shown,
        local: is_local(url),
        round_trips: us.len() as u64,
        round_trip_us_min: us[0],
        round_trip_us_p50: at(0.5),
        round_trip_us_p99: at(0.99),
        result_bytes: bytes,
        result_mb_s: best,
    }))
}

/// Whether `url`'s server is on this host: a Unix socket, a loopback address, or an address
/// one of this host's interfaces holds (the kernel routes those over loopback too).
pub fn is_local(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let Some((host, port)) = crate::metrics::net::endpoint_of(url) else {
        return true;
    };
    let Some(addr) = (host.as_str(), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return false;
    };
    addr.ip().is_loopback() || crate::metrics::net::interface_with(addr.ip()).is_some()
}

/// The probe's line: "network round trip  p50 41.2 us (min 30.1, p99 80.3) over 51234; a 64 MiB result at 1,234 MB/s".
pub fn line(n: &Network) -> String {
    format!(
        "network to {}{}: round trip p50 {:.1} us (min {:.1}, p99 {:.1}) over {} requests; a {} MiB result at {:.0} MB/s",
        n.target,
        if n.local { " (this host)" } else { "" },
        n.round_trip_us_p50,
        n.round_trip_us_min,
        n.round_trip_us_p99,
        n.round_trips,
        n.result_bytes >> 20,
        n.result_mb_s
    )
}
