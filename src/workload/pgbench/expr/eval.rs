//! Evaluating a parsed expression as pgbench does: integers and doubles, its operators, and
//! its functions (the random distributions, hashes, permute).

use super::PgPrng;
use super::{Expr, Op, Value};

/// What an expression reads while it is evaluated.
pub trait Env {
    fn var(&self, name: &str) -> Option<Value>;
    /// The client's own random sequence (pgbench's `cs_func_rs`).
    fn rand(&mut self) -> &mut PgPrng;
    /// The script and the command (from 0) being run, for `debug()`'s line.
    fn position(&self) -> (usize, usize) {
        (0, 0)
    }
}

/// A value as pgbench's `debug()` prints it: `null`, `boolean true`, `int 17`, `double 1e+30`
/// (C's `%.15g`).
pub fn debug_text(v: Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Int(i) => format!("int {i}"),
        Value::Double(d) => format!("double {}", format_g(d, 15)),
    }
}

pub use crate::cfmt::format_g;

pub fn eval(e: &Expr, env: &mut dyn Env) -> Result<Value, String> {
    Ok(match e {
        Expr::Lit(v) => *v,
        Expr::Var(n) => env
            .var(n)
            .ok_or_else(|| format!("undefined variable \"{n}\""))?,
        // pgbench's grammar reads -x as 0 - x, and ~x as -1 # x.
        Expr::Neg(x) => arithmetic(Op::Sub, Value::Int(0), eval(x, env)?)?,
        Expr::Not(x) => match eval(x, env)? {
            Value::Null => Value::Null,
            v => Value::Bool(!v.as_bool()?),
        },
        Expr::BitNot(x) => arithmetic(Op::BitXor, Value::Int(-1), eval(x, env)?)?,
        Expr::Bin(op, l, r) => binary(*op, l, r, env)?,
        Expr::Case(arms, other) => {
            for (c, v) in arms {
                if eval(c, env)?.truthy()? {
                    return eval(v, env);
                }
            }
            match other {
                Some(o) => eval(o, env)?,
                None => Value::Null,
            }
        }
        Expr::Call(f, args) => call(f, args, env)?,
    })
}

fn binary(op: Op, l: &Expr, r: &Expr, env: &mut dyn Env) -> Result<Value, String> {
    // AND and OR evaluate their right side only when needed, as pgbench does; NULL on either
    // side that is evaluated is NULL.
    if matches!(op, Op::And | Op::Or) {
        let a = eval(l, env)?;
        if a == Value::Null {
            return Ok(Value::Null);
        }
        let a = a.as_bool()?;
        if (op == Op::And) != a {
            return Ok(Value::Bool(a));
        }
        return Ok(match eval(r, env)? {
            Value::Null => Value::Null,
            b => Value::Bool(b.as_bool()?),
        });
    }
    let (a, b) = (eval(l, env)?, eval(r, env)?);
    arithmetic(op, a, b)
}

/// An operator on two values as pgbench's evalStandardFunc applies it: NULL if either is,
/// doubles if either is one (but for `%`), else integers, overflow an error.
fn arithmetic(op: Op, a: Value, b: Value) -> Result<Value, String> {
    if a == Value::Null || b == Value::Null {
        return Ok(Value::Null);
    }
    Ok(match op {
        Op::BitAnd | Op::BitOr | Op::BitXor | Op::Shl | Op::Shr => {
            let (x, y) = (a.as_int()?, b.as_int()?);
            Value::Int(match op {
                Op::BitAnd => x & y,
                Op::BitOr => x | y,
                Op::BitXor => x ^ y,
                Op::Shl => x.wrapping_shl(y as u32),
                _ => x.wrapping_shr(y as u32),
            })
        }
        _ if op != Op::Mod && (matches!(a, Value::Double(_)) || matches!(b, Value::Double(_))) => {
            let (x, y) = (a.as_f64()?, b.as_f64()?);
            match op {
                Op::Add => Value::Double(x + y),
                Op::Sub => Value::Double(x - y),
                Op::Mul => Value::Double(x * y),
                // As C divides doubles: by zero is an infinity (or NaN), not an error.
                Op::Div => Value::Double(x / y),
                _ => compare(op, x, y),
            }
        }
        _ => {
            let (x, y) = (a.as_int()?, b.as_int()?);
            let out = |r: Option<i64>, what: &str| {
                r.map(Value::Int)
                    .ok_or_else(|| format!("bigint {what} out of range"))
            };
            match op {
                Op::Add => out(x.checked_add(y), "add")?,
                Op::Sub => out(x.checked_sub(y), "sub")?,
                Op::Mul => out(x.checked_mul(y), "mul")?,
                Op::Div | Op::Mod if y == 0 => return Err("division by zero".into()),
                // pgbench: INT64_MIN / -1 is an error, INT64_MIN % -1 is 0.
                Op::Div => out(x.checked_div(y), "div")?,
                Op::Mod => Value::Int(x.wrapping_rem(y)),
                _ => compare(op, x, y),
            }
        }
    })
}

/// FNV-1a over the 8 bytes of `v`, from `seed`'s basis.
fn fnv1a(v: i64, seed: u64) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for byte in v.to_le_bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h as i64
}

/// MurmurHash2 (64-bit, the variant for one 64-bit value) of `v` with `seed`.
fn murmur2(v: i64, seed: u64) -> i64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ 8u64.wrapping_mul(M);
    let mut k = v as u64;
    k = k.wrapping_mul(M);
    k ^= k >> R;
    k = k.wrapping_mul(M);
    h ^= k;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h as i64
}

/// A function's seed argument, or `:default_seed` where it has none.
fn default_seed(given: Option<&Value>, env: &mut dyn Env) -> Result<i64, String> {
    match given {
        Some(s) => s.as_int(),
        None => env
            .var("default_seed")
            .ok_or_else(|| "undefined variable \"default_seed\"".to_string())?
            .as_int(),
    }
}

/// A comparison of two numbers of one type, as C compares them (NaN equal to nothing).
fn compare<T: PartialOrd>(op: Op, x: T, y: T) -> Value {
    Value::Bool(match op {
        Op::Eq => x == y,
        Op::Ne => x != y,
        Op::Lt => x < y,
        Op::Le => x <= y,
        Op::Gt => x > y,
        _ => x >= y,
    })
}

/// The greatest (or least) of `v`, each read by `read`.
fn extreme<T: PartialOrd>(
    greatest: bool,
    v: &[Value],
    read: fn(Value) -> Result<T, String>,
) -> Result<T, String> {
    let mut best = read(v[0])?;
    for x in &v[1..] {
        let x = read(*x)?;
        if (greatest && x > best) || (!greatest && x < best) {
            best = x;
        }
    }
    Ok(best)
}

/// The most arguments a call takes when it runs (pgbench's MAX_FARGS).
const MAX_ARGS: usize = 16;

fn call(f: &str, args: &[Expr], env: &mut dyn Env) -> Result<Value, String> {
    if args.len() > MAX_ARGS {
        return Err(format!(
            "too many function arguments, maximum is {MAX_ARGS}"
        ));
    }
    let mut v = Vec::with_capacity(args.len());
    for a in args {
        v.push(eval(a, env)?);
    }
    // A NULL argument makes the call NULL, but for IS and debug().
    if f != "__is" && f != "debug" && v.contains(&Value::Null) {
        return Ok(Value::Null);
    }
    let int = |i: usize| v[i].as_int();
    let dbl = |i: usize| v[i].as_f64();
    Ok(match f {
        "abs" => match v[0] {
            Value::Int(i) => Value::Int(i.wrapping_abs()),
            x => Value::Double(x.as_f64()?.abs()),
        },
        "debug" => {
            let (script, command) = env.position();
            eprintln!(
                "debug(script={script},command={}): {}",
                command + 1,
                debug_text(v[0])
            );
            v[0]
        }
        "double" => Value::Double(dbl(0)?),
        "int" => Value::Int(int(0)?),
        "exp" => Value::Double(dbl(0)?.exp()),
        "ln" => Value::Double(dbl(0)?.ln()),
        "sqrt" => Value::Double(dbl(0)?.sqrt()),
        "pi" => Value::Double(std::f64::consts::PI),
        "pow" | "power" => Value::Double(dbl(0)?.powf(dbl(1)?)),
        "mod" => arithmetic(Op::Mod, v[0], v[1])?,
        // Doubles if any argument is one, else integers (a boolean is neither).
        "greatest" | "least" if v.iter().any(|x| matches!(x, Value::Double(_))) => {
            Value::Double(extreme(f == "greatest", &v, Value::as_f64)?)
        }
        "greatest" | "least" => Value::Int(extreme(f == "greatest", &v, Value::as_int)?),
        // Without a seed, `:default_seed` (as pgbench's grammar supplies it).
        "hash" | "hash_murmur2" => {
            Value::Int(murmur2(int(0)?, default_seed(v.get(1), env)? as u64))
        }
        "hash_fnv1a" => Value::Int(fnv1a(int(0)?, default_seed(v.get(1), env)? as u64)),
        "permute" => {
            let (i, size) = (int(0)?, int(1)?);
            if size <= 0 {
                return Err("permute size parameter must be greater than zero".into());
            }
            Value::Int(super::prng::permute(i, size, default_seed(v.get(2), env)?))
        }
        f if f.starts_with("random") => random_call(f, &v, env)?,
        "__is" => Value::Bool(match (v[0], v[1]) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => false,
        }),
        other => return Err(format!("unknown function \"{other}\"")),
    })
}

/// pgbench's random functions: uniform, exponential, Gaussian and Zipfian over a range.
fn random_call(f: &str, v: &[Value], env: &mut dyn Env) -> Result<Value, String> {
    let int = |i: usize| v[i].as_int();
    let dbl = |i: usize| v[i].as_f64();
    // pgbench's checks: an empty range, and one whose size does not fit a bigint.
    let range = || -> Result<(i64, i64), String> {
        let (lo, hi) = (int(0)?, int(1)?);
        if lo > hi {
            return Err("empty range given to random".into());
        }
        if hi.checked_sub(lo).and_then(|d| d.checked_add(1)).is_none() {
            return Err("random range is too large".into());
        }
        Ok((lo, hi))
    };
    Ok(match f {
        "random" => {
            let (lo, hi) = range()?;
            Value::Int(env.rand().uniform(lo, hi))
        }
        "random_exponential" => {
            let (lo, hi) = range()?;
            let p = dbl(2)?;
            // NaN is not greater than 0 either.
            if p.is_nan() || p <= 0.0 {
                return Err(format!(
                    "exponential parameter must be greater than zero (not {p:.6})"
                ));
            }
            Value::Int(env.rand().exponential(lo, hi, p))
        }
        "random_gaussian" => {
            let (lo, hi) = range()?;
            let p = dbl(2)?;
            // NaN is not at least 2 either (and would draw forever).
            if p.is_nan() || p < 2.0 {
                return Err(format!(
                    "gaussian parameter must be at least 2.0 (not {p:.6})"
                ));
            }
            Value::Int(env.rand().gaussian(lo, hi, p))
        }
        "random_zipfian" => {
            let (lo, hi) = range()?;
            let s = dbl(2)?;
            if !(1.001..=1000.0).contains(&s) {
                return Err(format!(
                    "zipfian parameter must be in range [1.001, 1000] (not {s:.6})"
                ));
            }
            Value::Int(env.rand().zipfian(lo, hi, s))
        }
        other => return Err(format!("unknown function \"{other}\"")),
    })
}
