//! The MySQL protocol's packets as this client reads and writes them: errors, capability flags,
//! length-encoded integers, rows of both result formats and prepared statements.

use std::io;

#[derive(Debug)]
pub enum WireError {
    Io(io::Error),
    Server {
        code: u16,
        state: String,
        message: String,
    },
    Protocol(String),
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

// Capability flags.
pub(crate) const LONG_PASSWORD: u32 = 1;
pub(crate) const LONG_FLAG: u32 = 4;
pub(crate) const CONNECT_WITH_DB: u32 = 8;
pub(crate) const LOCAL_FILES: u32 = 0x80;
pub(crate) const PROTOCOL_41: u32 = 0x200;
pub(crate) const TRANSACTIONS: u32 = 0x2000;
pub(crate) const SECURE_CONNECTION: u32 = 0x8000;
pub(crate) const MULTI_RESULTS: u32 = 0x20000;
pub(crate) const PLUGIN_AUTH: u32 = 0x80000;
pub(crate) const SSL: u32 = 0x800;
/// Result sets end with an OK packet (0xFE header) and carry no EOF after their column
/// definitions: one packet fewer per result set (MySQL 5.7.5+, MariaDB 10.2+).
pub(crate) const DEPRECATE_EOF: u32 = 1 << 24;
/// Set by MySQL servers, clear in MariaDB's greeting: MariaDB's extended capabilities follow
/// in the greeting's reserved bytes and the response's filler.
pub(crate) const CLIENT_MYSQL: u32 = 1;
/// MariaDB's extended capability (bit 36, the fifth of the extended word): a column count is
/// followed by a "metadata follows" byte, and an execution whose result columns have not
/// changed since the prepare sends none (10.6+).
pub(crate) const MARIADB_CACHE_METADATA: u32 = 1 << 4;
/// Server status: another result follows.
pub(crate) const MORE_RESULTS: u16 = 0x0008;
pub(crate) const MAX_PACKET: usize = 0xFF_FFFF;

/// A statement prepared on the server.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub(crate) id: u32,
    pub(in crate::db) params: u16,
    /// The result columns as the server last described them, for decoding binary rows.
    pub(crate) columns: Vec<Column>,
}

/// What decoding a binary value needs of its column's definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    /// The type code (MYSQL_TYPE_*).
    pub(crate) ty: u8,
    /// UNSIGNED: an integer over the signed range keeps its value.
    pub(crate) unsigned: bool,
    /// Fractional digits of a time value (DATETIME(6) ...): as many as the text protocol shows.
    pub(crate) decimals: u8,
}

/// UNSIGNED_FLAG of a column definition's flags.
const UNSIGNED_FLAG: u16 = 0x20;

/// A binary result row (prepared statements) decoded to text, so that callers see the same
/// values as from a text query. The buffers are reused from row to row.
#[derive(Default)]
pub struct BinRow {
    pub(crate) text: Vec<u8>,
    pub(crate) cells: Vec<Option<(usize, usize)>>,
}

impl crate::db::conn::TextRow for BinRow {
    fn len(&self) -> usize {
        self.cells.len()
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (*self.cells.get(i)?)?;
        self.text.get(a..b)
    }
}

impl BinRow {
    /// Decodes packet `p` (0x00, the NULL bitmap with its offset of 2, then the values) by the
    /// columns' definitions.
    pub(crate) fn decode(&mut self, p: &[u8], types: &[Column]) -> Result<(), WireError> {
        use std::io::Write;
        let short = || WireError::Protocol("a truncated binary row".into());
        self.text.clear();
        self.cells.clear();
        let bitmap = p.get(1..1 + (types.len() + 9) / 8).ok_or_else(short)?;
        let mut at = 1 + bitmap.len();
        for (
            i,
            &Column {
                ty,
                unsigned,
                decimals,
            },
        ) in types.iter().enumerate()
        {
            let bit = i + 2;
            if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
                self.cells.push(None);
                continue;
            }
            let start = self.text.len();
            let mut fixed = |n: usize| -> Result<&[u8], WireError> {
                let v = p.get(at..at + n).ok_or_else(short)?;
                at += n;
                Ok(v)
            };
            let t = &mut self.text;
            let w = |r: std::io::Result<()>| r.map_err(WireError::Io);
            match ty {
                // Integers of 1, 2, 4 (MEDIUMINT too) and 8 bytes, signed or not.
                0x01 | 0x02 | 0x0D | 0x03 | 0x09 | 0x08 => {
                    let n = match ty {
                        0x01 => 1,
                        0x02 | 0x0D => 2,
                        0x08 => 8,
                        _ => 4,
                    };
                    let mut v = [0u8; 8];
                    v[..n].copy_from_slice(fixed(n)?);
                    let raw = u64::from_le_bytes(v);
                    if unsigned {
                        w(write!(t, "{raw}"))?
                    } else {
                        let shift = 64 - 8 * n as u32;
                        w(write!(t, "{}", ((raw << shift) as i64) >> shift))?
                    }
                }
                // FLOAT: rounded to six digits, as the server shows one.
                0x04 => float_text(
                    t,
                    f64::from(f32::from_le_bytes(fixed(4)?.try_into().unwrap_or_default())),
                    Some(6),
                ),
                0x05 => float_text(
                    t,
                    f64::from_le_bytes(fixed(8)?.try_into().unwrap_or_default()),
                    None,
                ),
                // DATE, DATETIME, TIMESTAMP: a length, then year, month, day, [h, m, s, [us]].
                0x07 | 0x0A | 0x0C => {
                    let n = usize::from(fixed(1)?[0]);
                    let d = fixed(n)?;
                    let year = d.get(..2).map_or(0, |y| u16::from_le_bytes([y[0], y[1]]));
                    let part = |k: usize| d.get(k).copied().unwrap_or(0);
                    w(write!(t, "{year:04}-{:02}-{:02}", part(2), part(3)))?;
                    if ty != 0x0A {
                        w(write!(t, " {:02}:{:02}:{:02}", part(4), part(5), part(6)))?;
                        fraction(t, d.get(7..11), decimals);
                    }
                }
                // TIME: a length, then sign, days, h, m, s, [us].
                0x0B => {
                    let n = usize::from(fixed(1)?[0]);
                    let d = fixed(n)?;
                    let part = |k: usize| u32::from(d.get(k).copied().unwrap_or(0));
                    let sign = if part(0) == 1 { "-" } else { "" };
                    let days = d
                        .get(1..5)
                        .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]));
                    w(write!(
                        t,
                        "{sign}{:02}:{:02}:{:02}",
                        days * 24 + part(5),
                        part(6),
                        part(7)
                    ))?;
                    fraction(t, d.get(8..12), decimals);
                }
                // DECIMAL, strings, blobs, everything else: length-encoded bytes.
                _ => {
                    let (len, skip) = lenenc_int(p.get(at..).unwrap_or_default());
                    let len = usize::try_from(len).map_err(|_| short())?;
                    let v = p.get(at + skip..at + skip + len).ok_or_else(short)?;
                    at += skip + len;
                    t.extend_from_slice(v);
                }
            }
            self.cells.push(Some((start, self.text.len())));
        }
        Ok(())
    }
}

/// Appends `v` as the text protocol shows a DOUBLE (`digits` None: the fewest digits that read
/// back as `v`) or a FLOAT (`Some(6)`: that many significant digits): positional while its
/// digits lie within 15 places of the point (`300000000000000`, `0.0000000000000025`,
/// `1234567890123456.8`), else with an exponent (`1e15`, `1.5e-16`, `3.40282e38`).
fn float_text(t: &mut Vec<u8>, v: f64, digits: Option<usize>) {
    use std::io::Write;
    if v == 0.0 {
        // Negative zero too: the server shows `0` for it.
        t.push(b'0');
        return;
    }
    let mut sci = [0u8; 40];
    let Some((negative, len, exp)) = sci_digits(v, digits, &mut sci) else {
        // What a server never stores (infinities, NaN), as Rust shows it.
        let _ = write!(t, "{v}");
        return;
    };
    let ds = &sci[..len];
    let sign: &[u8] = if negative { b"-" } else { b"" };
    // Digits before the point: `ds` is 0.ds x 10^point.
    let point = exp + 1;
    t.extend_from_slice(sign);
    let zeros = |t: &mut Vec<u8>, n: i32| t.extend(std::iter::repeat_n(b'0', n.max(0) as usize));
    if point > 0 && (point as usize) < len {
        let p = point as usize;
        t.extend_from_slice(&ds[..p]);
        t.push(b'.');
        t.extend_from_slice(&ds[p..]);
    } else if point > 0 && point <= 15 {
        t.extend_from_slice(ds);
        zeros(t, point - len as i32);
    } else if (-14..=0).contains(&point) {
        t.extend_from_slice(b"0.");
        zeros(t, -point);
        t.extend_from_slice(ds);
    } else {
        t.push(ds[0]);
        if len > 1 {
            t.push(b'.');
            t.extend_from_slice(&ds[1..]);
        }
        let _ = write!(t, "e{exp}");
    }
}

/// Writes `v` in Rust's `{:e}` form into `buf` (`digits` significant digits, or the fewest that
/// read back), then leaves there its significant digits without the point and trailing zeros:
/// whether it is negative, how many digits, and the decimal exponent of the first.
fn sci_digits(v: f64, digits: Option<usize>, buf: &mut [u8; 40]) -> Option<(bool, usize, i32)> {
    use std::io::Write;
    let mut w = std::io::Cursor::new(&mut buf[..]);
    match digits {
        None => write!(w, "{v:e}"),
        Some(n) => write!(w, "{v:.*e}", n.saturating_sub(1)),
    }
    .ok()?;
    let end = w.position() as usize;
    let e = buf[..end].iter().position(|&b| b == b'e')?;
    let exp = std::str::from_utf8(&buf[e + 1..end]).ok()?.parse().ok()?;
    let negative = buf[0] == b'-';
    let mut len = 0;
    for i in usize::from(negative)..e {
        if buf[i] != b'.' {
            buf[len] = buf[i];
            len += 1;
        }
    }
    while len > 1 && buf[len - 1] == b'0' {
        len -= 1;
    }
    (len > 0).then_some((negative, len, exp))
}

/// Appends a time value's fraction as the text protocol shows it: `decimals` digits (1 to 6)
/// of its microseconds (`us`: 4 bytes, absent when zero).
fn fraction(t: &mut Vec<u8>, us: Option<&[u8]>, decimals: u8) {
    if !(1..=6).contains(&decimals) {
        return;
    }
    let us = us
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes);
    let digits = format!("{:06}", us.min(999_999));
    t.push(b'.');
    t.extend_from_slice(&digits.as_bytes()[..usize::from(decimals)]);
}

/// A column definition packet's type, flags and decimals: after six length-encoded strings
/// (catalog, schema, table, original table, name, original name), the length of the fixed
/// fields, the character set (2 bytes) and the column length (4 bytes). A short packet reads
/// as a string column (its value is then shown as the bytes it holds).
pub(crate) fn column_def(p: &[u8]) -> Column {
    let mut at = 0;
    for _ in 0..6 {
        let (len, skip) = lenenc_int(p.get(at..).unwrap_or_default());
        at = at
            .saturating_add(skip)
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
    }
    let (_, skip) = lenenc_int(p.get(at..).unwrap_or_default());
    let fixed = at.saturating_add(skip).saturating_add(6);
    let byte = |k: usize| p.get(fixed.saturating_add(k)).copied();
    let flags = u16::from_le_bytes([byte(1).unwrap_or(0), byte(2).unwrap_or(0)]);
    Column {
        ty: byte(0).unwrap_or(0xFE),
        unsigned: flags & UNSIGNED_FLAG != 0,
        decimals: byte(3).unwrap_or(0),
    }
}

/// A row packet. Text rows (what `query` returns) are length-encoded values, 0xFB for NULL;
/// binary rows (prepared statements) are never looked into. With it, its result set's column
/// names, and which result set of the reply it is in.
pub struct MyRow<'a>(
    pub(crate) &'a [u8],
    pub(crate) &'a ColumnNames,
    pub(crate) usize,
);

/// A text result set's column names, read from its column definitions (kept between
/// queries: no allocation once grown).
#[derive(Default)]
pub struct ColumnNames {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl ColumnNames {
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Keeps the name of column definition `def` (catalog, schema, table, original table,
    /// then the name: length-encoded strings); a definition too short for it gives "".
    pub(crate) fn push(&mut self, def: &[u8]) {
        let mut at = 0;
        for _ in 0..4 {
            let (len, skip) = lenenc_int(def.get(at..).unwrap_or_default());
            at = at
                .saturating_add(skip)
                .saturating_add(usize::try_from(len).unwrap_or(usize::MAX / 2));
        }
        let rest = def.get(at..).unwrap_or_default();
        let (len, skip) = lenenc_int(rest);
        let name = usize::try_from(len)
            .ok()
            .and_then(|l| rest.get(skip..skip.checked_add(l)?))
            .unwrap_or_default();
        self.bytes.extend_from_slice(name);
        self.ends.push(self.bytes.len());
    }

    fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        std::str::from_utf8(&self.bytes[start..end]).ok()
    }
}

impl crate::db::conn::TextRow for MyRow<'_> {
    fn name(&self, i: usize) -> Option<&str> {
        self.1.get(i)
    }

    fn result_set(&self) -> usize {
        self.2
    }

    fn len(&self) -> usize {
        let mut at = 0;
        let mut n = 0;
        while let Some(rest) = self.0.get(at..).filter(|r| !r.is_empty()) {
            if rest[0] == 0xFB {
                at += 1;
            } else {
                let (len, skip) = lenenc_int(rest);
                at += skip + usize::try_from(len).unwrap_or(usize::MAX / 2);
            }
            n += 1;
        }
        n
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let mut at = 0;
        for n in 0.. {
            let rest = self.0.get(at..).filter(|r| !r.is_empty())?;
            let value = if rest[0] == 0xFB {
                at += 1;
                None
            } else {
                let (len, skip) = lenenc_int(rest);
                let start = at + skip;
                at = start + usize::try_from(len).ok()?;
                Some((start, at))
            };
            if n == i {
                return value.and_then(|(a, b)| self.0.get(a..b));
            }
        }
        None
    }
}

pub(crate) fn lenenc_int(b: &[u8]) -> (u64, usize) {
    match b.first() {
        Some(0xFC) if b.len() >= 3 => (u64::from(u16::from_le_bytes([b[1], b[2]])), 3),
        Some(0xFD) if b.len() >= 4 => (u64::from(u32::from_le_bytes([b[1], b[2], b[3], 0])), 4),
        Some(0xFE) if b.len() >= 9 => (
            u64::from_le_bytes(b[1..9].try_into().unwrap_or_default()),
            9,
        ),
        Some(0xFC..=0xFE) => (0, b.len()),
        Some(&v) => (u64::from(v), 1),
        None => (0, 0),
    }
}

pub(crate) fn put_lenenc(buf: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => buf.push(v as u8),
        251..=0xFFFF => {
            buf.push(0xFC);
            buf.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buf.push(0xFD);
            buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            buf.push(0xFE);
            buf.extend_from_slice(&v.to_le_bytes());
        }
    }
}

pub(crate) fn server_error(p: &[u8]) -> WireError {
    if p.len() < 3 {
        return WireError::Protocol("a truncated error packet".into());
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let (state, msg) = if p.get(3) == Some(&b'#') && p.len() >= 9 {
        (&p[4..9], &p[9..])
    } else {
        (&b""[..], &p[3..])
    };
    WireError::Server {
        code,
        state: String::from_utf8_lossy(state).into_owned(),
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures are what MariaDB 10.11's text protocol sent for these values in DOUBLE and
    /// FLOAT columns (the integration test `prepared_rows_follow_unsigned_and_altered_columns_on_each_version`
    /// compares with each server's own text).
    #[test]
    fn doubles_and_floats_read_as_the_text_protocol_shows_them() {
        let text = |v: f64, digits| {
            let mut t = Vec::new();
            float_text(&mut t, v, digits);
            String::from_utf8(t).unwrap()
        };
        for (v, want) in [
            (1e20, "1e20"),
            (-1e20, "-1e20"),
            (1.5e-7, "0.00000015"),
            (-1.5e-7, "-0.00000015"),
            (1e15, "1e15"),
            (1.5e15, "1.5e15"),
            (3e14, "300000000000000"),
            (9.99e14, "999000000000000"),
            (1e16, "1e16"),
            (99999999999999999.0, "1e17"),
            (1234567890123456.7, "1234567890123456.8"),
            (100000000000000.5, "100000000000000.5"),
            (1.2345678901234567e16, "1.2345678901234568e16"),
            (1.2345678901234567e20, "1.2345678901234567e20"),
            (1.7976931348623157e308, "1.7976931348623157e308"),
            (2.5e-15, "0.0000000000000025"),
            (1.5e-15, "0.0000000000000015"),
            (1e-15, "0.000000000000001"),
            (1.2345678901234567e-14, "0.000000000000012345678901234567"),
            (1e-16, "1e-16"),
            (1.5e-16, "1.5e-16"),
            (1e-300, "1e-300"),
            (0.30000000000000004, "0.30000000000000004"),
            (0.1, "0.1"),
            (2.25, "2.25"),
            (0.0, "0"),
            (-0.0, "0"),
        ] {
            assert_eq!(text(v, None), want, "DOUBLE {v:e}");
        }
        for (v, want) in [
            (1.1f32, "1.1"),
            (1.5, "1.5"),
            (1e20, "1e20"),
            (-1e20, "-1e20"),
            (3.4e38, "3.4e38"),
            (3.4028234e38, "3.40282e38"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (1e8, "100000000"),
            (123456789.0, "123457000"),
            (16777217.0, "16777200"),
            (1234567.0, "1234570"),
            (1.5e7, "15000000"),
            (1.0000001, "1"),
            (1e-7, "0.0000001"),
            (1e-5, "0.00001"),
            (1.25e-5, "0.0000125"),
            (0.000_123_456_8, "0.000123457"),
            (1e-14, "0.00000000000001"),
            (2e-38, "2e-38"),
            (0.0, "0"),
        ] {
            assert_eq!(text(f64::from(v), Some(6)), want, "FLOAT {v:e}");
        }
    }

    #[test]
    fn column_definitions_give_type_sign_and_decimals_and_short_ones_do_not_panic() {
        let mut def = Vec::new();
        for s in ["def", "db", "t", "t", "k", "k"] {
            put_lenenc(&mut def, s.len() as u64);
            def.extend_from_slice(s.as_bytes());
        }
        def.push(0x0C);
        def.extend_from_slice(&[0x3F, 0, 10, 0, 0, 0, 0x03]); // charset, length, LONG
        def.extend_from_slice(&(UNSIGNED_FLAG | 1).to_le_bytes());
        def.extend_from_slice(&[4, 0, 0]);
        let full = column_def(&def);
        assert_eq!(
            full,
            Column {
                ty: 0x03,
                unsigned: true,
                decimals: 4
            }
        );
        for n in 0..def.len() {
            let c = column_def(&def[..n]);
            assert!(c.ty == 0x03 || c.ty == 0xFE, "{n}: {c:?}");
        }
        // A length that points past the end reads as a string column.
        assert_eq!(
            column_def(&[0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).ty,
            0xFE
        );
    }

    #[test]
    fn column_names_come_from_their_definitions_and_short_ones_give_none() {
        let mut names = ColumnNames::default();
        // catalog "def", schema "db", table "t", original table "t", name "abc", then more.
        names.push(b"\x03def\x02db\x01t\x01t\x03abc\x03abc\x0c");
        names.push(b"\x03def\x02db"); // cut short
        names.push(b"\x03def\x00\x00\x00\xfc\xff\xff"); // a length past the end
        assert_eq!(names.get(0), Some("abc"));
        assert_eq!(names.get(1), Some(""));
        assert_eq!(names.get(2), Some(""));
        assert_eq!(names.get(3), None);
    }
}
