//! C's number formats where another tool's text needs them.

/// C's `%.{digits}g` as PostgreSQL's snprintf prints it (pgbench's numbers; sysbench's sizes):
/// the shorter of fixed and exponent notation, trailing zeros dropped.
pub fn format_g(x: f64, digits: usize) -> String {
    // PostgreSQL's own snprintf spells these out (pgbench prints with it).
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let digits = digits.max(1);
    // The exponent after rounding to `digits` significant digits.
    let sci = format!("{:.*e}", digits - 1, x);
    let (mantissa, exp) = sci.split_once('e').expect("an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= digits as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (digits as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

/// A number from outside as a message quotes it: as Rust prints it where that is short, in
/// exponent notation beyond 1e15 and below 1e-6 (`1.7e308`, `1e-300`, not 300 digits).
pub fn quoted(x: f64) -> String {
    let a = x.abs();
    if x.is_finite() && a != 0.0 && !(1e-6..1e15).contains(&a) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}
