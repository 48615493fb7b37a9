//! pgbench's expression language (`\set`), written from pgbench's documentation: integer and
//! double values, `:variables`, arithmetic, comparisons, boolean operators, CASE, and the
//! functions. Parsed once when the script is read; evaluated per transaction.

mod eval;
mod parse;
pub mod prng;
#[cfg(test)]
mod tests;
mod value;

pub use eval::{Env, eval};
pub use parse::{Expr, MAX_DEPTH, MAX_TOKENS, Op, parse, parse_at};
pub use prng::PgPrng;
pub use value::Value;
