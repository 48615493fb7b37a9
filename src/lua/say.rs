//! What sysbench's SQL API says and raises: its drivers' log lines (ALERT, FATAL) as sysbench
//! 1.0.20's log prints them, a repeated line counted rather than printed again; and its errors
//! raised with the position sysbench's `error(msg, level)` gives them, so that `pcall` and
//! a script's message read as under sysbench (`file:line: SQL API error`, no traceback).

use std::sync::Mutex;

use mlua::{Lua, Value};

use crate::db::{DbError, Dialect};

/// The last line said and how often it came again since.
static LAST: Mutex<(String, u32)> = Mutex::new((String::new(), 0));

/// Prints one of sysbench's log lines on stdout, as its log does: a line equal to the one
/// before is counted, and the count is said before the next other line.
pub(super) fn say(line: &str) {
    flush_lua_output();
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if last.0 == line {
        last.1 += 1;
        return;
    }
    if last.1 > 0 {
        println!("(last message repeated {} times)", last.1);
    }
    *last = (line.to_string(), 0);
    println!("{line}");
}

/// An ALERT line, printed under `--verbosity` 1 and above.
pub(super) fn alert(what: &str) {
    if super::scripts::verbosity() >= 1 {
        say(&format!("ALERT: {what}"));
    }
}

/// A FATAL line, always printed.
pub(super) fn fatal(what: &str) {
    say(&format!("FATAL: {what}"));
}

/// How an SQL API call failed: an error sysbench raises as a message at a level (2: where the
/// script called the function), or an error the runner must see (an ignorable one restarts the
/// event, a lost connection reconnects).
pub(super) enum Failed {
    Raise(String, u8),
    Lua(mlua::Error),
}

impl From<mlua::Error> for Failed {
    fn from(e: mlua::Error) -> Failed {
        Failed::Lua(e)
    }
}

/// sysbench's error for a call the API refuses (a closed connection, a failed prepare).
pub(super) fn api_error(level: u8) -> Failed {
    Failed::Raise("SQL API error".into(), level)
}

impl Failed {
    /// The Lua error to return: a raised message carries its position ("file:line: "), as
    /// Lua's `error(msg, level)` puts it, and reads as that message alone (see [`said`]).
    pub(super) fn into_lua(self, lua: &Lua) -> mlua::Error {
        match self {
            Failed::Lua(e) => e,
            Failed::Raise(msg, level) => mlua::Error::external(Raised(positioned(lua, msg, level))),
        }
    }
}

/// `msg` with the position of the Lua function at sysbench's `level` (2: the one that called
/// the API's function; a C function such as `pcall` has none).
fn positioned(lua: &Lua, msg: String, level: u8) -> String {
    // The frames of dbsweep's own `pcall` (PCALL) are not the script's: they are skipped.
    let mut want = usize::from(level.saturating_sub(1));
    if want == 0 {
        return msg;
    }
    let mut at = None;
    for n in 1..64 {
        let frame = lua.inspect_stack(n, |d| {
            let src = d.source().short_src.map(|s| s.into_owned());
            (src, d.current_line())
        });
        let Some((src, line)) = frame else { break };
        if src.as_deref() == Some(PCALL_NAME) {
            continue;
        }
        want -= 1;
        if want == 0 {
            at = src.zip(line).map(|(s, l)| format!("{s}:{l}: "));
            break;
        }
    }
    match at {
        Some(at) => format!("{at}{msg}"),
        None => msg,
    }
}

/// The chunk name of [`PCALL`], as Lua shows it.
pub(super) const PCALL_NAME: &str = "dbsweep-pcall";

/// An error sysbench raises as a plain string (its message, the position in front).
#[derive(Debug)]
pub struct Raised(pub String);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// The message of a raised error anywhere in `e`'s chain.
pub fn raised_in(e: &mlua::Error) -> Option<&str> {
    match e {
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<Raised>().map(|r| r.0.as_str()),
        mlua::Error::CallbackError { cause, .. } => raised_in(cause),
        mlua::Error::WithContext { cause, .. } => raised_in(cause),
        _ => None,
    }
}

/// What `pcall` and `xpcall` hand a script for error `v`: a raised error's message, as the
/// string sysbench's `error()` raised; anything else as it is.
pub(super) fn said(lua: &Lua, v: Value) -> mlua::Result<Value> {
    if let Value::Error(e) = &v
        && let Some(msg) = raised_in(e)
    {
        return Ok(Value::String(lua.create_string(msg)?));
    }
    Ok(v)
}

/// `pcall` and `xpcall` that give a raised error as its message (see [`said`]); run once per
/// state, after `sysbench._said` is set.
pub(super) const PCALL: &str = r#"
local said, raw_pcall, raw_xpcall, select = sysbench._said, pcall, xpcall, select
sysbench._said = nil
local function caught(ok, ...)
  if ok then return ok, ... end
  return false, said((...))
end
function pcall(f, ...) return caught(raw_pcall(f, ...)) end
function xpcall(f, handler, ...)
  return raw_xpcall(f, function(e) return handler(said(e)) end, ...)
end
-- An error descriptor's connection, as sysbench's: a cdata that prints as <sql_connection>
-- (inspect() shows it so) and reaches the connection's methods.
local ffi = require("ffi")
ffi.cdef[[typedef struct { int id; } dbsweep_conn_ref;]]
local refs, n = {}, 0
local ref_t = ffi.metatype("dbsweep_conn_ref", {
  __tostring = function() return "<sql_connection>" end,
  __index = function(r, k)
    local c = refs[r.id]
    local v = c[k]
    if type(v) == "function" then return function(_, ...) return v(c, ...) end end
    return v
  end,
})
sysbench.sql._conn_ref = function(c)
  n = n + 1
  refs[n] = c
  refs[n - 64] = nil
  return ref_t(n)
end
"#;

/// A statement as it went to the server: its text, or a prepared statement's.
#[derive(Clone, Copy)]
pub(super) enum Sent<'a> {
    Text(&'a str),
    Prepared(&'a str),
    /// Nothing was sent (a reconnect).
    Nothing,
}

/// What sysbench's driver logs when a statement fails with an error it does not ignore.
pub(super) fn failed_statement(dialect: Dialect, e: &DbError, errno: i64, sent: Sent<'_>) {
    match dialect {
        Dialect::Postgres => {
            // PGRES_FATAL_ERROR is 7; the prepared statement's text is not said.
            let call = match sent {
                Sent::Prepared(_) => "PQexecPrepared",
                _ => "PQexec",
            };
            fatal(&format!("{call}() failed: 7 {}", e.message));
            if let Sent::Text(q) = sent {
                fatal(&format!("failed query was: {q}"));
            }
        }
        Dialect::Mysql => {
            let (call, q) = match sent {
                Sent::Text(q) => ("mysql_drv_query()", Some(q)),
                Sent::Prepared(q) => ("mysql_stmt_execute()", Some(q)),
                Sent::Nothing => ("mysql_drv_reconnect()", None),
            };
            match q {
                Some(q) => fatal(&format!(
                    "{call} returned error {errno} ({}) for query '{q}'",
                    e.message
                )),
                None => fatal(&format!("{call} returned error {errno} ({})", e.message)),
            }
        }
        _ => fatal(&e.to_string()),
    }
}

/// What sysbench's driver logs when a statement cannot be prepared.
pub(super) fn failed_prepare(dialect: Dialect, e: &DbError, errno: i64, sql: &str) {
    match dialect {
        Dialect::Postgres => fatal(&format!("PQprepare() failed: {}", e.libpq_text(Some(sql)))),
        Dialect::Mysql => {
            fatal("mysql_stmt_prepare() failed");
            fatal(&format!("MySQL error: {errno} \"{}\"", e.message));
        }
        _ => fatal(&e.to_string()),
    }
}

/// What sysbench's driver logs when a connection to `url` (passwords hidden) cannot be
/// opened; MySQL's in the words and numbers of its client library.
pub(super) fn failed_connect(dialect: Dialect, url: &str, e: &DbError) {
    match dialect {
        Dialect::Postgres => fatal(&format!("Connection to database failed: {}\n", e.message)),
        Dialect::Mysql => {
            let parts = crate::db::url::Parts::of(url);
            let socket = parts.as_ref().and_then(|p| {
                p.query
                    .iter()
                    .find(|(k, _)| *k == "socket")
                    .and_then(|(_, v)| *v)
            });
            let hostport = parts
                .as_ref()
                .map_or("", |p| p.hostpath.split('/').next().unwrap_or(""));
            let (host, port) = match hostport.rsplit_once(':') {
                Some((h, p)) => (h, p.parse().unwrap_or(3306)),
                None => (hostport, 3306u16),
            };
            match socket {
                Some(s) => fatal(&format!(
                    "unable to connect to MySQL server on socket '{s}', aborting..."
                )),
                None => fatal(&format!(
                    "unable to connect to MySQL server on host '{host}', port {port}, aborting..."
                )),
            }
            let server_said = e
                .code
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u32>().ok());
            let (errno, what) = match server_said {
                Some(n) => (n, e.message.clone()),
                None if e.message.contains("could not translate host name") => {
                    (2005, format!("Unknown server host '{host}' (-2)"))
                }
                None => {
                    let os = e
                        .message
                        .split("(os error ")
                        .nth(1)
                        .and_then(|r| r.split(')').next())
                        .unwrap_or("115");
                    match socket {
                        Some(s) => (
                            2002,
                            format!("Can't connect to local server through socket '{s}' ({os})"),
                        ),
                        // MariaDB's connector (Debian's sysbench links it) connects without
                        // blocking and says EINPROGRESS (115) for a refused connection.
                        None => {
                            let os = if os == "111" { "115" } else { os };
                            (2002, format!("Can't connect to server on '{host}' ({os})"))
                        }
                    }
                }
            };
            fatal(&format!("error {errno}: {what}"));
        }
        _ => fatal(&e.to_string()),
    }
}

/// Lua's `print` and `io.write` go through C's stdio buffer, dbsweep's own output does not:
/// flushing after each script function keeps the two in order when stdout is a pipe or file.
pub fn flush_lua_output() {
    // SAFETY: fflush(NULL) flushes every C output stream; no pointer is dereferenced.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}
