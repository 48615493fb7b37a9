//! The network as a queueing device: bytes per operation through the interface that carries
//! the connection to the database, and its utilisation against the link's speed.

use std::fs;
use std::net::{IpAddr, ToSocketAddrs, UdpSocket};

use crate::results::figures::NetFigures;

impl NetFigures {
    /// From the interface's byte counters over `secs` seconds and `ops` operations.
    pub fn of(
        device: &str,
        (rx, tx): (f64, f64),
        secs: f64,
        ops: f64,
        link: Option<(f64, &str)>,
    ) -> Option<NetFigures> {
        if ops <= 0.0 || secs <= 0.0 {
            return None;
        }
        let per_o = |b: f64| b / 1024.0 / ops;
        let bits_per_s = rx.max(tx) * 8.0 / secs;
        Some(NetFigures {
            device: device.to_string(),
            rx_kb_per_o: per_o(rx),
            tx_kb_per_o: per_o(tx),
            link_mbit: link.map(|l| l.0),
            link_source: link.map(|l| l.1.to_string()),
            busy_pct: link
                .filter(|l| l.0 > 0.0)
                .map(|l| (bits_per_s / (l.0 * 1e6) * 100.0).min(100.0)),
        })
    }

    /// Seconds of the link's service per operation (its utilisation over the throughput).
    pub fn demand_s(&self, ops_per_s: f64) -> Option<f64> {
        self.busy_pct
            .filter(|_| ops_per_s > 0.0)
            .map(|pct| pct / 100.0 / ops_per_s)
    }
}

/// (received, sent) bytes of `device` in /proc/net/dev's text.
pub fn parse_net_dev(text: &str, device: &str) -> Option<(u64, u64)> {
    text.lines().skip(2).find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != device {
            return None;
        }
        let f: Vec<&str> = rest.split_whitespace().collect();
        // Receive: bytes packets errs drop fifo frame compressed multicast; then transmit.
        Some((f.first()?.parse().ok()?, f.get(8)?.parse().ok()?))
    })
}

/// This host's counters of `device` from /proc/net/dev (of this network namespace).
pub fn read_device(device: &str) -> Option<(u64, u64)> {
    parse_net_dev(&fs::read_to_string("/proc/net/dev").ok()?, device)
}

/// The link speed of `device` in Mbit/s from sysfs; None for a loopback or an unknown speed.
pub fn sysfs_speed(device: &str) -> Option<f64> {
    let s: f64 = fs::read_to_string(format!("/sys/class/net/{device}/speed"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (s > 0.0).then_some(s)
}

/// The interface the kernel routes to `host:port` through: the one holding the source
/// address it picks (a UDP socket's connect sends nothing). None for a Unix socket path or an
/// unresolvable name.
pub fn device_towards(host: &str, port: u16) -> Option<String> {
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    let bind: (IpAddr, u16) = if addr.is_ipv4() {
        ([0, 0, 0, 0].into(), 0)
    } else {
        ([0u16; 8].into(), 0)
    };
    let sock = UdpSocket::bind(bind).ok()?;
    sock.connect(addr).ok()?;
    let local = sock.local_addr().ok()?.ip();
    if local.is_loopback() {
        return Some("lo".into());
    }
    interface_with(local)
}

/// The interface holding `ip` (getifaddrs).
pub(crate) fn interface_with(ip: IpAddr) -> Option<String> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
        let addr = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(IpAddr::from(u32::from_be(a.sin_addr.s_addr).to_be_bytes()))
                }
                libc::AF_INET6 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    Some(IpAddr::from(a.sin6_addr.s6_addr))
                }
                _ => None,
            }
        };
        if addr == Some(ip) {
            // SAFETY: ifa_name is a NUL-terminated string of the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The host and port a database URL connects to over TCP; None for SQLite, a Unix socket or
/// a URL without a host.
pub fn endpoint_of(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let port = match scheme {
        "postgres" | "postgresql" | "pgsql" => 5432,
        "mysql" | "mariadb" => 3306,
        _ => return None,
    };
    let authority = rest.split(['/', '?']).next()?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if hostport.is_empty() || hostport.starts_with('%') || hostport.starts_with('/') {
        return None;
    }
    if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => port,
        };
        return Some((host.to_string(), port));
    }
    match hostport.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((hostport.to_string(), port)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET_DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1296000    9000    0    0    0     0          0         0  1296000    9000    0    0    0     0       0          0
  eth0: 52000000   40000    0    0    0     0          0         0  7300000   30000    0    0    0     0       0          0
";

    #[test]
    fn net_dev_gives_each_interface_its_bytes() {
        assert_eq!(
            parse_net_dev(NET_DEV, "eth0"),
            Some((52_000_000, 7_300_000))
        );
        assert_eq!(parse_net_dev(NET_DEV, "lo"), Some((1_296_000, 1_296_000)));
        assert_eq!(parse_net_dev(NET_DEV, "eth1"), None);
        assert_eq!(parse_net_dev("garbage", "eth0"), None);
    }

    #[test]
    fn figures_per_operation_and_against_the_link() {
        // 10 s, 1000 ops: 1 MB in, 8 MB out; a 100 Mbit/s link carried 6.4 Mbit/s out.
        let f = NetFigures::of(
            "eth0",
            (1_048_576.0, 8_000_000.0),
            10.0,
            1000.0,
            Some((100.0, "sysfs")),
        )
        .unwrap();
        assert!((f.rx_kb_per_o - 1.024).abs() < 1e-9);
        assert!((f.tx_kb_per_o - 7.8125).abs() < 1e-9);
        assert!((f.busy_pct.unwrap() - 6.4).abs() < 1e-9);
        // 100 ops/s: 6.4% busy is 0.64 ms of the link per operation.
        assert!((f.demand_s(100.0).unwrap() - 0.00064).abs() < 1e-12);
        let lo = NetFigures::of("lo", (1.0, 1.0), 1.0, 1.0, None).unwrap();
        assert_eq!((lo.busy_pct, lo.demand_s(10.0)), (None, None));
        assert!(NetFigures::of("eth0", (1.0, 1.0), 1.0, 0.0, None).is_none());
    }

    #[test]
    fn endpoints_of_database_urls() {
        assert_eq!(
            endpoint_of("postgres://u:p@db.example:6432/sb?sslmode=require"),
            Some(("db.example".into(), 6432))
        );
        assert_eq!(
            endpoint_of("mysql://root@10.0.0.2/sb"),
            Some(("10.0.0.2".into(), 3306))
        );
        assert_eq!(
            endpoint_of("postgres://u@[::1]:5433/sb"),
            Some(("::1".into(), 5433))
        );
        assert_eq!(endpoint_of("postgres://u@%2Ftmp%2Fpg:5432/sb"), None);
        assert_eq!(endpoint_of("sqlite:///tmp/x.db"), None);
        assert_eq!(endpoint_of("postgres://u@h:notaport/sb"), None);
        assert_eq!(device_towards("127.0.0.1", 5432).as_deref(), Some("lo"));
    }
}
