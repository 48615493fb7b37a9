//! The expression language against pgbench's meanings and words.

use super::*;

struct E(PgPrng);
impl Env for E {
    fn var(&self, name: &str) -> Option<Value> {
        match name {
            "scale" => Some(Value::Int(3)),
            "default_seed" => Some(Value::Int(7)),
            _ => None,
        }
    }
    fn rand(&mut self) -> &mut PgPrng {
        &mut self.0
    }
}

fn ev(s: &str) -> Result<Value, String> {
    eval(&parse(s)?, &mut E(PgPrng::seeded(1)))
}

#[test]
fn arithmetic_follows_pgbenchs_types_and_precedence() {
    assert_eq!(ev("1 + 2 * 3"), Ok(Value::Int(7)));
    assert_eq!(ev("(1 + 2) * :scale"), Ok(Value::Int(9)));
    assert_eq!(ev("7 / 2"), Ok(Value::Int(3)));
    assert_eq!(ev("7 / 2.0"), Ok(Value::Double(3.5)));
    assert_eq!(ev("-7 % 3"), Ok(Value::Int(-1)));
    assert_eq!(ev("1 << 4 | 1"), Ok(Value::Int(17)));
    assert_eq!(ev("5 # 1"), Ok(Value::Int(4)));
    assert_eq!(ev("~0"), Ok(Value::Int(-1)));
    assert_eq!(ev("1 / 0").unwrap_err(), "division by zero");
    assert!(ev("9223372036854775807 + 1").is_err());
    assert_eq!(ev("1e3"), Ok(Value::Double(1000.0)));
}

#[test]
fn is_null_notnull_and_isnull_bind_below_the_comparisons() {
    assert!(matches!(ev("null is null"), Ok(Value::Bool(true))));
    assert!(matches!(ev("1 notnull"), Ok(Value::Bool(true))));
    assert!(matches!(
        ev("null isnull and 1 is not null"),
        Ok(Value::Bool(true))
    ));
    // (1 < 2) IS TRUE, as pgbench's precedence reads it.
    assert!(matches!(ev("1 < 2 is true"), Ok(Value::Bool(true))));
    assert!(matches!(ev("not 1 is null"), Ok(Value::Bool(true))));
}

#[test]
fn comparisons_case_and_boolean_logic() {
    assert_eq!(ev("1 < 2 and not 3 = 4"), Ok(Value::Bool(true)));
    assert_eq!(ev("1 <> 1 or false"), Ok(Value::Bool(false)));
    assert_eq!(
        ev("CASE WHEN :scale > 5 THEN 1 WHEN :scale = 3 THEN 2 ELSE 3 END"),
        Ok(Value::Int(2))
    );
    assert_eq!(ev("null is null"), Ok(Value::Bool(true)));
    assert_eq!(ev("1 is not null"), Ok(Value::Bool(true)));
    // OR does not evaluate its right side when its left holds.
    assert_eq!(ev("true or 1/0 = 1"), Ok(Value::Bool(true)));
}

#[test]
fn functions_give_values_in_their_ranges() {
    assert_eq!(ev("abs(-4)"), Ok(Value::Int(4)));
    assert_eq!(ev("greatest(1, 7, 3)"), Ok(Value::Int(7)));
    assert_eq!(ev("least(1, 0.5)"), Ok(Value::Double(0.5)));
    // int() rounds to the nearest, as pgbench (rint).
    assert_eq!(ev("int(3.9) + mod(10, 4)"), Ok(Value::Int(6)));
    assert_eq!(ev("sqrt(16)"), Ok(Value::Double(4.0)));
    assert_eq!(ev("pow(2, 10)"), Ok(Value::Double(1024.0)));
    assert!(matches!(ev("pi()"), Ok(Value::Double(p)) if p == std::f64::consts::PI));
    let mut env = E(PgPrng::seeded(1));
    for f in [
        "random(1, 10)",
        "random_exponential(1, 10, 2.5)",
        "random_gaussian(1, 10, 2.5)",
        "random_zipfian(1, 10, 1.5)",
        "permute(:x, 10)",
    ] {
        let e = parse(&f.replace(":x", "5")).unwrap();
        for _ in 0..500 {
            let v = eval(&e, &mut env).unwrap().as_int().unwrap();
            let lo = if f.starts_with("permute") { 0 } else { 1 };
            assert!((lo..=lo + 9).contains(&v), "{f} gave {v}");
        }
    }
    // permute is a permutation.
    let mut seen: Vec<i64> = (0..100)
        .map(|i| ev(&format!("permute({i}, 100)")).unwrap().as_int().unwrap())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..100).collect::<Vec<_>>());
    assert_eq!(ev("hash(5)"), ev("hash_murmur2(5, 7)"));
    assert_ne!(ev("hash_fnv1a(5)"), ev("hash_fnv1a(6)"));
}

#[test]
fn wide_ranges_and_nan_parameters_are_pgbenchs_errors_not_panics_or_endless_loops() {
    let (min, max) = (i64::MIN + 1, i64::MAX);
    for f in [
        format!("random({min}, {max})"),
        format!("random(-1, {max})"),
        format!("random_exponential({min}, {max}, 2.0)"),
        format!("random_gaussian({min}, 0, 2.5)"),
        format!("random_zipfian(-2, {max}, 1.5)"),
    ] {
        let e = ev(&f).unwrap_err();
        assert!(e.contains("random range is too large"), "{f}: {e}");
    }
    // The widest ranges that fit: their size, hi - lo + 1, is a bigint.
    assert!(ev(&format!("random(1, {max})")).is_ok());
    assert!(ev(&format!("random(-{max}, -1)")).is_ok());
    assert!(ev(&format!("random(0, {max})")).is_err());
    let nan = "sqrt(-1)";
    for f in [
        format!("random_gaussian(1, 10, {nan})"),
        format!("random_exponential(1, 10, {nan})"),
        format!("random_zipfian(1, 10, {nan})"),
    ] {
        let e = ev(&f).unwrap_err();
        assert!(e.contains("(not NaN)"), "{f}: {e}");
    }
}

#[test]
fn deep_or_long_expressions_are_refused_without_overflowing_the_stack() {
    // On half a default thread's stack.
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let parens = format!("{}1{}", "(".repeat(2000), ")".repeat(2000));
            let unary = format!("{}1", "-".repeat(3000));
            let nots = format!("{}true", "not ".repeat(3000));
            let calls = format!("{}1{}", "abs(".repeat(1000), ")".repeat(1000));
            for deep in [parens, unary, nots, calls] {
                let e = parse(&deep).unwrap_err();
                assert!(e.contains("too deep"), "{e}");
            }
            let chain = format!("1{}", "+1".repeat(1000));
            assert!(parse(&chain).unwrap_err().contains("too deep"));
            let long = format!("1{}", "+1".repeat(20_000));
            assert!(parse(&long).unwrap_err().contains("too long"));
            // As deep as allowed: evaluated.
            let ok = format!("{}1{}", "(".repeat(100), ")".repeat(100));
            assert!(matches!(ev(&ok), Ok(Value::Int(1))));
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn bad_expressions_say_what_is_wrong() {
    // In pgbench's words (its suite greps them).
    assert_eq!(
        parse("random(1)").unwrap_err(),
        "unexpected number of arguments (random)"
    );
    assert_eq!(
        parse("least()").unwrap_err(),
        "at least one argument expected (least)"
    );
    assert_eq!(
        parse("nosuch(1)").unwrap_err(),
        "unexpected function name (nosuch)"
    );
    assert_eq!(parse("1 +").unwrap_err(), "syntax error");
    assert_eq!(parse_at("1 +").unwrap_err().1, 3);
    assert_eq!(parse_at("(1").unwrap_err(), ("syntax error".into(), 2));
    assert_eq!(
        parse("100000000000000000000").unwrap_err(),
        "bigint constant overflow (100000000000000000000)"
    );
    assert!(
        parse(".1E310")
            .unwrap_err()
            .starts_with("double constant overflow")
    );
    // The least integer is written with a minus; its magnitude alone is an overflow.
    assert!(matches!(
        ev("-9223372036854775808"),
        Ok(Value::Int(i64::MIN))
    ));
    assert!(parse("9223372036854775808").is_err());
    // A character of several bytes from a script file is an error, not a panic.
    assert!(
        parse("1 + é")
            .unwrap_err()
            .contains("unexpected character \"é\"")
    );
    assert!(ev(":nope + 1").unwrap_err().contains("undefined variable"));
    assert!(ev("random(5, 1)").unwrap_err().contains("empty range"));
}
