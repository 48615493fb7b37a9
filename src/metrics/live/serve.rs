//! The endpoint: an HTTP listener on its own thread answering `GET /metrics` with the live
//! figures. It binds when the command starts (a taken port fails before anything runs) and
//! stops when the command ends.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::Live;
use crate::error::Error;

/// OpenMetrics' media type, as Prometheus asks for it.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long the listener waits for a request before it looks whether to stop.
const POLL: Duration = Duration::from_millis(200);

/// A listening endpoint and the figures it serves; dropping it stops the listener.
pub struct Endpoint {
    pub live: Arc<Live>,
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

/// `PORT` (on loopback) or `HOST:PORT`, as `--metrics-listen` takes it.
pub fn address(spec: &str) -> Result<SocketAddr, String> {
    let spec = spec.trim();
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let mut addrs = spec
        .to_socket_addrs()
        .map_err(|e| format!("'{spec}' is not PORT or HOST:PORT ({e})"))?;
    addrs
        .next()
        .ok_or_else(|| format!("'{spec}' names no address"))
}

/// Listens on `spec` (`--metrics-listen`'s value, or `what` names where it was given) and
/// serves the live figures from a thread.
pub fn listen(spec: &str, what: &str) -> Result<Endpoint, Error> {
    let addr = address(spec).map_err(|e| Error::Usage(format!("{what}: {e}")))?;
    let server = tiny_http::Server::http(addr)
        .map_err(|e| Error::Usage(format!("{what} {addr}: cannot listen: {e}")))?;
    let addr = server.server_addr().to_ip().unwrap_or(addr);
    let server = Arc::new(server);
    let live = Arc::new(Live::default());
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (server, live, stop) = (server.clone(), live.clone(), stop.clone());
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&server, &live, &stop))
            .map_err(|e| Error::Run(format!("--metrics-listen: cannot start its thread: {e}")))?
    };
    Ok(Endpoint {
        live,
        addr,
        stop,
        server,
        thread: Some(thread),
    })
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Endpoint({})", self.addr)
    }
}

fn serve(server: &tiny_http::Server, live: &Live, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let request = match server.recv_timeout(POLL) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => break,
        };
        let path = request.url().split('?').next().unwrap_or("");
        let response = if *request.method() != tiny_http::Method::Get {
            tiny_http::Response::from_string("only GET\n").with_status_code(405)
        } else if path == "/metrics" || path == "/" {
            let header = tiny_http::Header::from_bytes("Content-Type", CONTENT_TYPE)
                .expect("a valid header");
            tiny_http::Response::from_string(live.text()).with_header(header)
        } else {
            tiny_http::Response::from_string("dbsweep serves /metrics\n").with_status_code(404)
        };
        // A scraper that went away is its own business.
        let _ = request.respond(response);
    }
}

impl Drop for Endpoint {
    /// Stops the listener. Its thread is not waited for: a scraper that stopped reading an
    /// answer could hold it in a write, and the command's end never waits on a scraper.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.server.unblock();
        drop(self.thread.take());
    }
}
