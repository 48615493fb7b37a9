//! pgbench's expressions: the tree and its parser with pgbench's operators, functions and limits.

use super::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Value),
    Var(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    /// CASE WHEN c THEN v ... [ELSE e] END.
    Case(Vec<(Expr, Expr)>, Option<Box<Expr>>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Double(f64),
    Ident(String),
    Var(String),
    Sym(&'static str),
    /// 9223372036854775808: only after a unary minus (pgbench's lexer and grammar alike).
    MaxPlusOne,
}

/// The tokens of `s` and the byte offset of each one's last byte (where pgbench's caret points
/// for an error at that token); an error names the offset it stopped at.
fn tokens(s: &str) -> Result<(Vec<Tok>, Vec<usize>), (String, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut pos = Vec::new();
    let mut i = 0;
    const SYMS: [&str; 22] = [
        "<>", "!=", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%", "(", ")", ",", "=", "<", ">",
        "&", "|", "#", "~", "!",
    ];
    while i < b.len() {
        let c = b[i];
        let before = out.len();
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                // An exponent's sign.
                if (b[i] == b'e' || b[i] == b'E') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                    i += 1;
                }
                i += 1;
            }
            let t = &s[start..i];
            out.push(match t.parse::<i64>() {
                Ok(v) => Tok::Int(v),
                Err(_) if t == "9223372036854775808" => Tok::MaxPlusOne,
                Err(_) if t.bytes().all(|c| c.is_ascii_digit()) => {
                    return Err((format!("bigint constant overflow ({t})"), i - 1));
                }
                Err(_) => match t.parse::<f64>() {
                    Ok(d) if d.is_finite() => Tok::Double(d),
                    Ok(_) => return Err((format!("double constant overflow ({t})"), i - 1)),
                    Err(_) => return Err((SYNTAX.into(), start)),
                },
            });
        } else if c == b':' {
            let start = i + 1;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i == start {
                return Err((SYNTAX.into(), i));
            }
            out.push(Tok::Var(s[start..i].to_string()));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_ascii_lowercase()));
        } else if let Some(sym) = SYMS.iter().find(|sym| s[i..].starts_with(**sym)) {
            out.push(Tok::Sym(sym));
            i += sym.len();
        } else {
            let c = s[i..].chars().next().unwrap_or('?');
            return Err((format!("unexpected character \"{c}\""), i));
        }
        if out.len() > before {
            // Where pgbench's lexer stands once it has read the token: its last byte.
            pos.push(i - 1);
        }
    }
    Ok((out, pos))
}

/// What pgbench's grammar says of any expression it cannot read.
const SYNTAX: &str = "syntax error";

struct Parser {
    toks: Vec<Tok>,
    /// Where each token ends (its last byte) in the expression's text, and the text's length.
    pos: Vec<usize>,
    len: usize,
    /// Where an error that is not at the next token points.
    err_at: Option<usize>,
    /// The expression as written (a function's name as the script spells it).
    text: String,
    at: usize,
    /// How many sub-expressions (parentheses, arguments, unary operators) the parser is in.
    depth: usize,
}

/// The deepest an expression may nest (parentheses, arguments, unary operators, and operators
/// applied to the results of others): parsing, evaluating and dropping an expression recurse
/// once per level, and a thread's stack is finite. pgbench's scripts nest a few levels.
pub const MAX_DEPTH: usize = 256;

/// The most tokens an expression may have: a longer one is not a benchmark's (and its tree,
/// however flat its text, would be as deep as it is long).
pub const MAX_TOKENS: usize = 10_000;

fn too_deep() -> String {
    format!("expression too deep: more than {MAX_DEPTH} nested levels")
}

/// How deep `e`'s tree is, counted without recursion.
fn tree_depth(e: &Expr) -> usize {
    let mut stack = vec![(e, 1)];
    let mut deepest = 0;
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        match e {
            Expr::Lit(_) | Expr::Var(_) => {}
            Expr::Neg(x) | Expr::Not(x) | Expr::BitNot(x) => stack.push((x, d + 1)),
            Expr::Bin(_, l, r) => stack.extend([(&**l, d + 1), (&**r, d + 1)]),
            Expr::Call(_, args) => stack.extend(args.iter().map(|a| (a, d + 1))),
            Expr::Case(arms, other) => {
                for (c, v) in arms {
                    stack.extend([(c, d + 1), (v, d + 1)]);
                }
                stack.extend(other.as_deref().map(|o| (o, d + 1)));
            }
        }
    }
    deepest
}

/// Parses a `\set` expression.
pub fn parse(s: &str) -> Result<Expr, String> {
    parse_at(s).map_err(|(e, _)| e)
}

/// `s` parsed, or what is wrong and the byte offset in `s` where the parser stood (for
/// pgbench's `^ error found here`).
pub fn parse_at(s: &str) -> Result<Expr, (String, usize)> {
    let (toks, pos) = tokens(s)?;
    if toks.len() > MAX_TOKENS {
        return Err((
            format!(
                "expression too long: {} tokens, past the {MAX_TOKENS} an expression may have",
                toks.len()
            ),
            0,
        ));
    }
    let mut p = Parser {
        toks,
        pos,
        len: s.len(),
        err_at: None,
        text: s.to_string(),
        at: 0,
        depth: 0,
    };
    let e = p.or().map_err(|e| (e, p.err_at.unwrap_or(p.offset())))?;
    if tree_depth(&e) > MAX_DEPTH {
        return Err((too_deep(), 0));
    }
    match p.toks.get(p.at) {
        None => Ok(e),
        Some(_) => Err((SYNTAX.into(), p.offset())),
    }
}

impl Parser {
    /// `f` one level deeper, refused past [`MAX_DEPTH`].
    fn deeper(&mut self, f: fn(&mut Parser) -> Result<Expr, String>) -> Result<Expr, String> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep());
        }
        self.depth += 1;
        let e = f(self);
        self.depth -= 1;
        e
    }

    /// Where the parser stands in the text: the next token (its last byte), or the end.
    fn offset(&self) -> usize {
        self.pos.get(self.at).copied().unwrap_or(self.len)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(x)) if x == w) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        self.deeper(Parser::or_chain)
    }

    fn or_chain(&mut self) -> Result<Expr, String> {
        let mut l = self.and()?;
        while self.eat_word("or") {
            l = Expr::Bin(Op::Or, Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut l = self.not()?;
        while self.eat_word("and") {
            l = Expr::Bin(Op::And, Box::new(l), Box::new(self.not()?));
        }
        Ok(l)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.eat_word("not") || self.eat_sym("!") {
            return Ok(Expr::Not(Box::new(self.deeper(Parser::not)?)));
        }
        self.is()
    }

    /// `IS [NOT] NULL|TRUE|FALSE`, `ISNULL`, `NOTNULL`: below the comparisons and above NOT,
    /// as in pgbench's grammar.
    fn is(&mut self) -> Result<Expr, String> {
        let mut l = self.cmp()?;
        loop {
            if self.eat_word("isnull") {
                l = Expr::Call("__is".into(), vec![l, Expr::Lit(Value::Null)]);
            } else if self.eat_word("notnull") {
                l = Expr::Not(Box::new(Expr::Call(
                    "__is".into(),
                    vec![l, Expr::Lit(Value::Null)],
                )));
            } else if self.eat_word("is") {
                let negate = self.eat_word("not");
                let rhs = match self.peek() {
                    Some(Tok::Ident(w)) if w == "null" => Value::Null,
                    Some(Tok::Ident(w)) if w == "true" => Value::Bool(true),
                    Some(Tok::Ident(w)) if w == "false" => Value::Bool(false),
                    _ => return Err(SYNTAX.into()),
                };
                self.at += 1;
                let e = Expr::Call("__is".into(), vec![l, Expr::Lit(rhs)]);
                l = if negate { Expr::Not(Box::new(e)) } else { e };
            } else {
                return Ok(l);
            }
        }
    }

    fn cmp(&mut self) -> Result<Expr, String> {
        let l = self.bits()?;
        let op = match self.peek() {
            Some(Tok::Sym("=")) => Op::Eq,
            Some(Tok::Sym("<>" | "!=")) => Op::Ne,
            Some(Tok::Sym("<")) => Op::Lt,
            Some(Tok::Sym("<=")) => Op::Le,
            Some(Tok::Sym(">")) => Op::Gt,
            Some(Tok::Sym(">=")) => Op::Ge,
            _ => return Ok(l),
        };
        self.at += 1;
        Ok(Expr::Bin(op, Box::new(l), Box::new(self.bits()?)))
    }

    fn bits(&mut self) -> Result<Expr, String> {
        let mut l = self.shift()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("&")) => Op::BitAnd,
                Some(Tok::Sym("|")) => Op::BitOr,
                Some(Tok::Sym("#")) => Op::BitXor,
                _ => return Ok(l),
            };
            self.at += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.shift()?));
        }
    }

    fn shift(&mut self) -> Result<Expr, String> {
        let mut l = self.sum()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("<<")) => Op::Shl,
                Some(Tok::Sym(">>")) => Op::Shr,
                _ => return Ok(l),
            };
            self.at += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.sum()?));
        }
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut l = self.product()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("+")) => Op::Add,
                Some(Tok::Sym("-")) => Op::Sub,
                _ => return Ok(l),
            };
            self.at += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("*")) => Op::Mul,
                Some(Tok::Sym("/")) => Op::Div,
                Some(Tok::Sym("%")) => Op::Mod,
                _ => return Ok(l),
            };
            self.at += 1;
            l = Expr::Bin(op, Box::new(l), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat_sym("-") {
            if matches!(self.peek(), Some(Tok::MaxPlusOne)) {
                self.at += 1;
                return Ok(Expr::Lit(Value::Int(i64::MIN)));
            }
            return Ok(Expr::Neg(Box::new(self.deeper(Parser::unary)?)));
        }
        if self.eat_sym("+") {
            return self.deeper(Parser::unary);
        }
        if self.eat_sym("~") {
            return Ok(Expr::BitNot(Box::new(self.deeper(Parser::unary)?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let t = self.peek().cloned().ok_or(SYNTAX)?;
        self.at += 1;
        Ok(match t {
            Tok::Int(i) => Expr::Lit(Value::Int(i)),
            Tok::Double(d) => Expr::Lit(Value::Double(d)),
            Tok::Var(v) => Expr::Var(v),
            Tok::Sym("(") => {
                let e = self.or()?;
                if !self.eat_sym(")") {
                    return Err(SYNTAX.into());
                }
                e
            }
            Tok::Ident(w) if w == "true" => Expr::Lit(Value::Bool(true)),
            Tok::Ident(w) if w == "false" => Expr::Lit(Value::Bool(false)),
            Tok::Ident(w) if w == "null" => Expr::Lit(Value::Null),
            Tok::Ident(w) if w == "case" => self.case()?,
            Tok::Ident(name) => {
                if !self.eat_sym("(") {
                    return Err(SYNTAX.into());
                }
                // pgbench's grammar looks the name up as soon as it is read: the caret at
                // the name, the name as written.
                if !FUNCTIONS
                    .iter()
                    .any(|(f, ..)| *f == name && !matches!(*f, "sin" | "cos" | "__is"))
                {
                    let last = self.pos[self.at - 2];
                    self.err_at = Some(last);
                    let written = self
                        .text
                        .get(last + 1 - name.len()..=last)
                        .unwrap_or(&name)
                        .to_string();
                    return Err(format!("unexpected function name ({written})"));
                }
                let mut args = Vec::new();
                if !self.eat_sym(")") {
                    loop {
                        args.push(self.or()?);
                        if self.eat_sym(")") {
                            break;
                        }
                        if !self.eat_sym(",") {
                            return Err(SYNTAX.into());
                        }
                    }
                }
                // Judged once the call is read: pgbench points at its last token.
                if let Err(e) = check_call(&name, args.len()) {
                    self.err_at = self.pos.get(self.at - 1).copied();
                    return Err(e);
                }
                Expr::Call(name, args)
            }
            _ => {
                self.at -= 1;
                return Err(SYNTAX.into());
            }
        })
    }

    fn case(&mut self) -> Result<Expr, String> {
        let mut arms = Vec::new();
        while self.eat_word("when") {
            let c = self.or()?;
            if !self.eat_word("then") {
                return Err(SYNTAX.into());
            }
            arms.push((c, self.or()?));
        }
        if arms.is_empty() {
            return Err(SYNTAX.into());
        }
        let other = if self.eat_word("else") {
            Some(Box::new(self.or()?))
        } else {
            None
        };
        if !self.eat_word("end") {
            return Err(SYNTAX.into());
        }
        Ok(Expr::Case(arms, other))
    }
}

/// The functions and how many arguments each takes (min, max).
const FUNCTIONS: [(&str, usize, usize); 24] = [
    ("abs", 1, 1),
    ("debug", 1, 1),
    ("double", 1, 1),
    ("exp", 1, 1),
    ("greatest", 1, usize::MAX),
    ("hash", 1, 2),
    ("hash_fnv1a", 1, 2),
    ("hash_murmur2", 1, 2),
    ("int", 1, 1),
    ("least", 1, usize::MAX),
    ("ln", 1, 1),
    ("mod", 2, 2),
    ("permute", 2, 3),
    ("pi", 0, 0),
    ("pow", 2, 2),
    ("power", 2, 2),
    ("random", 2, 2),
    ("random_exponential", 3, 3),
    ("random_gaussian", 3, 3),
    ("random_zipfian", 3, 3),
    ("sqrt", 1, 1),
    ("sin", 1, 1),
    ("cos", 1, 1),
    ("__is", 2, 2),
];

/// A call's function and count of arguments judged as pgbench's grammar judges them (a count
/// past what a variadic function takes is judged when it runs, as pgbench does).
fn check_call(name: &str, n: usize) -> Result<(), String> {
    match FUNCTIONS.iter().find(|(f, ..)| *f == name) {
        None | Some(("sin" | "cos" | "__is", ..)) => {
            Err(format!("unexpected function name ({name})"))
        }
        Some((f, 1, usize::MAX)) if n == 0 => Err(format!("at least one argument expected ({f})")),
        Some((f, lo, hi)) if n < *lo || n > *hi => {
            Err(format!("unexpected number of arguments ({f})"))
        }
        Some(_) => Ok(()),
    }
}
