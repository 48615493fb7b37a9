//! Evaluating a parsed expression as pgbench does: integers and doubles, its operators, and
//! its functions (the random distributions, hashes, permute).

use super::{Expr, Op, Value};
use crate::workload::rand::{Rand, Zipf};

/// What an expression reads while it is evaluated.
pub trait Env {
    fn var(&self, name: &str) -> Option<Value>;
    fn rand(&mut self) -> &mut Rand;
    fn seed(&self) -> u64;
}

pub fn eval(e: &Expr, env: &mut dyn Env) -> Result<Value, String> {
    Ok(match e {
        Expr::Lit(v) => *v,
        Expr::Var(n) => env
            .var(n)
            .ok_or_else(|| format!("undefined variable \"{n}\""))?,
        Expr::Neg(x) => match eval(x, env)? {
            Value::Int(i) => Value::Int(i.checked_neg().ok_or("bigint out of range")?),
            v => Value::Double(-v.as_f64()?),
        },
        Expr::Not(x) => Value::Bool(!eval(x, env)?.truthy()?),
        Expr::BitNot(x) => Value::Int(!eval(x, env)?.as_int()?),
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
    // AND and OR evaluate their right side only when needed, as pgbench does.
    if matches!(op, Op::And | Op::Or) {
        let a = eval(l, env)?.truthy()?;
        if (op == Op::And) != a {
            return Ok(Value::Bool(a));
        }
        return Ok(Value::Bool(eval(r, env)?.truthy()?));
    }
    let (a, b) = (eval(l, env)?, eval(r, env)?);
    let ints = matches!(
        (a, b),
        (
            Value::Int(_) | Value::Bool(_),
            Value::Int(_) | Value::Bool(_)
        )
    );
    let cmp = |x: std::cmp::Ordering| -> Value {
        Value::Bool(match op {
            Op::Eq => x.is_eq(),
            Op::Ne => x.is_ne(),
            Op::Lt => x.is_lt(),
            Op::Le => x.is_le(),
            Op::Gt => x.is_gt(),
            _ => x.is_ge(),
        })
    };
    Ok(match op {
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            if ints {
                cmp(a.as_int()?.cmp(&b.as_int()?))
            } else {
                cmp(a
                    .as_f64()?
                    .partial_cmp(&b.as_f64()?)
                    .ok_or("NaN compared")?)
            }
        }
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
        _ if ints => {
            let (x, y) = (a.as_int()?, b.as_int()?);
            let r = match op {
                Op::Add => x.checked_add(y),
                Op::Sub => x.checked_sub(y),
                Op::Mul => x.checked_mul(y),
                Op::Div | Op::Mod if y == 0 => return Err("division by zero".into()),
                // pgbench: INT64_MIN / -1 is an error, INT64_MIN % -1 is 0.
                Op::Div => x.checked_div(y),
                _ => Some(x.wrapping_rem(y)),
            };
            Value::Int(r.ok_or("bigint out of range")?)
        }
        _ => {
            let (x, y) = (a.as_f64()?, b.as_f64()?);
            Value::Double(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div if y == 0.0 => return Err("division by zero".into()),
                Op::Div => x / y,
                _ => return Err("% takes integers".into()),
            })
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

/// A pseudorandom permutation of 0..size, keyed by `seed`: `i` maps to a distinct value (a
/// cycle walk over a Feistel-like mix on the next power of two).
fn permute(i: i64, size: i64, seed: u64) -> Result<i64, String> {
    if size <= 0 {
        return Err("permute(): size must be greater than zero".into());
    }
    let (size, mut v) = (size as u64, i.rem_euclid(size) as u64);
    let bits = 64 - (size - 1).leading_zeros().min(63);
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    loop {
        for round in 0..4u64 {
            v = (v ^ (murmur2(round as i64, seed) as u64 >> 7)) & mask;
            v = v.wrapping_mul(0x9e37_79b9_7f4a_7c15 | 1) & mask;
            v ^= v >> (bits / 2).max(1);
        }
        if v < size {
            return Ok(v as i64);
        }
    }
}

fn call(f: &str, args: &[Expr], env: &mut dyn Env) -> Result<Value, String> {
    let mut v = Vec::with_capacity(args.len());
    for a in args {
        v.push(eval(a, env)?);
    }
    let int = |i: usize| v[i].as_int();
    let dbl = |i: usize| v[i].as_f64();
    Ok(match f {
        "abs" => match v[0] {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or("bigint out of range")?),
            x => Value::Double(x.as_f64()?.abs()),
        },
        "debug" => {
            eprintln!("debug(script=0,command=0): {:?}", v[0]);
            v[0]
        }
        "double" => Value::Double(dbl(0)?),
        "int" => Value::Int(int(0)?),
        "exp" => Value::Double(dbl(0)?.exp()),
        "ln" => Value::Double(dbl(0)?.ln()),
        "sqrt" => Value::Double(dbl(0)?.sqrt()),
        "pi" => Value::Double(std::f64::consts::PI),
        "pow" | "power" => Value::Double(dbl(0)?.powf(dbl(1)?)),
        "mod" => binary(Op::Mod, &Expr::Lit(v[0]), &Expr::Lit(v[1]), env)?,
        "greatest" | "least" => {
            let ints = v.iter().all(|x| matches!(x, Value::Int(_)));
            let better = |a: f64, b: f64| if f == "greatest" { b > a } else { b < a };
            let mut best = v[0];
            for x in &v[1..] {
                if better(best.as_f64()?, x.as_f64()?) {
                    best = *x;
                }
            }
            if ints {
                best
            } else {
                Value::Double(best.as_f64()?)
            }
        }
        "hash" | "hash_murmur2" => Value::Int(murmur2(
            int(0)?,
            v.get(1).map_or(Ok(env.seed() as i64), |s| s.as_int())? as u64,
        )),
        "hash_fnv1a" => Value::Int(fnv1a(
            int(0)?,
            v.get(1).map_or(Ok(env.seed() as i64), |s| s.as_int())? as u64,
        )),
        "permute" => Value::Int(permute(
            int(0)?,
            int(1)?,
            v.get(2).map_or(Ok(env.seed() as i64), |s| s.as_int())? as u64,
        )?),
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
            return Err(format!("{f}(): empty range {lo}..{hi}"));
        }
        if hi.checked_sub(lo).and_then(|d| d.checked_add(1)).is_none() {
            return Err(format!("{f}(): random range is too large ({lo}..{hi})"));
        }
        Ok((lo, hi))
    };
    let pick = |lo: i64, hi: i64, u: f64| -> i64 {
        let span = (hi - lo) as f64 + 1.0;
        lo + ((u * span) as i64).clamp(0, hi - lo)
    };
    Ok(match f {
        "random" => {
            let (lo, hi) = range()?;
            let u = env.rand().unit();
            Value::Int(pick(lo, hi, u))
        }
        "random_exponential" => {
            let (lo, hi) = range()?;
            let p = dbl(2)?;
            // NaN is not greater than 0 either.
            if p.is_nan() || p <= 0.0 {
                return Err(format!(
                    "random_exponential(): parameter must be greater than 0 (not {p})"
                ));
            }
            // Truncated exponential over [0, 1): -ln(1 - u(1 - e^-p)) / p.
            let u = env.rand().unit();
            let x = -(1.0 - u * (1.0 - (-p).exp())).ln() / p;
            Value::Int(pick(lo, hi, x))
        }
        "random_gaussian" => {
            let (lo, hi) = range()?;
            let p = dbl(2)?;
            // NaN is not at least 2 either (and would draw forever).
            if p.is_nan() || p < 2.0 {
                return Err(format!(
                    "random_gaussian(): parameter must be at least 2.0 (not {p})"
                ));
            }
            // A normal draw kept within [-p, p), mapped onto the range.
            let x = loop {
                let (u1, u2) = (env.rand().unit(), env.rand().unit());
                let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                if (-p..p).contains(&z) {
                    break (z + p) / (2.0 * p);
                }
            };
            Value::Int(pick(lo, hi, x))
        }
        "random_zipfian" => {
            let (lo, hi) = range()?;
            let s = dbl(2)?;
            if !(1.001..=1000.0).contains(&s) {
                return Err(format!(
                    "random_zipfian(): parameter must be in [1.001, 1000] (not {s})"
                ));
            }
            let z = Zipf::new((hi - lo + 1) as u64, s);
            Value::Int(lo + z.sample(env.rand()) as i64 - 1)
        }
        other => return Err(format!("unknown function \"{other}\"")),
    })
}
