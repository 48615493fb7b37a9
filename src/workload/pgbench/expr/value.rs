//! pgbench's values (integer, double, boolean, NULL) and the coercions between them, in its
//! words.

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
    Bool(bool),
    Null,
}

impl Value {
    /// The type's name in pgbench's messages.
    pub fn type_name(self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Double(_) => "double",
            Value::Bool(_) => "boolean",
            Value::Null => "null",
        }
    }

    /// As pgbench's coerceToDouble: an int or a double.
    pub fn as_f64(self) -> Result<f64, String> {
        match self {
            Value::Int(i) => Ok(i as f64),
            Value::Double(d) => Ok(d),
            v => Err(format!("cannot coerce {} to double", v.type_name())),
        }
    }

    /// As pgbench's coerceToInt: an int, or a double rounded to the nearest (ties to even)
    /// that fits.
    pub fn as_int(self) -> Result<i64, String> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => {
                let r = d.round_ties_even();
                // i64::MIN is exact as a double; i64::MAX + 1 is the first that does not fit.
                if r.is_nan()
                    || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r)
                {
                    Err(format!("double to int overflow for {r:.6}"))
                } else {
                    Ok(r as i64)
                }
            }
            v => Err(format!("cannot coerce {} to int", v.type_name())),
        }
    }

    /// As pgbench's coerceToBool (NOT, AND, OR): a boolean only.
    pub fn as_bool(self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(b),
            v => Err(format!("cannot coerce {} to boolean", v.type_name())),
        }
    }

    /// As pgbench's valueTruth (CASE, `\if`): NULL is false, a number is true unless zero.
    pub fn truthy(self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(b),
            Value::Int(i) => Ok(i != 0),
            Value::Double(d) => Ok(d != 0.0),
            Value::Null => Ok(false),
        }
    }

    /// As pgbench prints a variable into SQL (getVariable): `NULL`, `true`, an integer, a
    /// double as `%.15g`.
    pub fn text(self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Double(d) => super::eval::format_g(d, 15),
            Value::Bool(b) => b.to_string(),
            Value::Null => "NULL".into(),
        }
    }
}
