//! pgbench's scripts, read as pgbench reads them (its documented grammar): SQL commands ended
//! by a semicolon, with `:name` variables; meta-commands from a backslash to the end of the
//! line (a backslash before the newline continues it), case-insensitive: `\set`, `\sleep`,
//! `\if \elif \else \endif`, `\shell`, `\setshell`, `\startpipeline \syncpipeline
//! \endpipeline`, and `\gset [prefix]` / `\aset [prefix]` after an SQL command (on its line or
//! the next) to keep its result in variables; `\;` joins SQL statements into one command. A
//! script error names the file, the line and the command.

pub use super::command::{Command, Store};
use super::lexer::{SqlEnd, dollar_quote_end, scan_sql};
use super::meta::{MetaError, meta};

#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub name: String,
    pub commands: Vec<Command>,
    /// Each command's first line as written, as pgbench's `-r` prints it.
    pub sources: Vec<String>,
    /// For each `\if`/`\elif`/`\else`, the index of the next branch (or of its `\endif`);
    /// for each `\endif`, nothing. Resolved when the script is read.
    pub jumps: Vec<Option<usize>>,
}

/// pgbench's built-in scripts: (name, description as pgbench prints it, text).
pub const BUILTINS: [(&str, &str, &str); 3] = [
    (
        "tpcb-like",
        "<builtin: TPC-B (sort of)>",
        "\\set aid random(1, 100000 * :scale)\n\
         \\set bid random(1, 1 * :scale)\n\
         \\set tid random(1, 10 * :scale)\n\
         \\set delta random(-5000, 5000)\n\
         BEGIN;\n\
         UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
         UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
         UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
         INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
         END;\n",
    ),
    (
        "simple-update",
        "<builtin: simple update>",
        "\\set aid random(1, 100000 * :scale)\n\
         \\set bid random(1, 1 * :scale)\n\
         \\set tid random(1, 10 * :scale)\n\
         \\set delta random(-5000, 5000)\n\
         BEGIN;\n\
         UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
         INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
         END;\n",
    ),
    (
        "select-only",
        "<builtin: select only>",
        "\\set aid random(1, 100000 * :scale)\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    ),
];

/// The built-in script whose name starts with `prefix` (pgbench takes any unique prefix).
pub fn builtin(prefix: &str) -> Result<(&'static str, &'static str, &'static str), String> {
    let found: Vec<_> = BUILTINS
        .iter()
        .filter(|(n, ..)| n.starts_with(prefix))
        .collect();
    match found.as_slice() {
        [one] => Ok(**one),
        _ if BUILTINS.iter().any(|(n, ..)| *n == prefix) => {
            Ok(*BUILTINS.iter().find(|(n, ..)| *n == prefix).expect("found"))
        }
        [] => Err(format!(
            "no builtin script found for name \"{prefix}\" (available: tpcb-like, simple-update, select-only)"
        )),
        _ => Err(format!("ambiguous builtin name: \"{prefix}\"")),
    }
}

/// pgbench's list of its built-in scripts (`-b list`).
pub fn builtin_list() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for (name, desc, _) in BUILTINS {
        s.push_str(&format!("{name:>15}: {desc}\n"));
    }
    s.push('\n');
    s
}

/// Splits SQL into text and `:name` references (not `::` casts, not inside quotes); `\;`
/// joins statements.
fn sql(source: &str) -> Command {
    let (mut text, mut vars) = (vec![String::new()], Vec::new());
    // The statements that give a result: the empty ones between `\;`s give none.
    let mut parts = 0;
    let mut statement = false;
    let b = source.as_bytes();
    let (mut i, mut quote) = (0, None::<u8>);
    while i < b.len() {
        let c = b[i];
        let joiner = quote.is_none() && c == b'\\' && b.get(i + 1) == Some(&b';');
        if !(c.is_ascii_whitespace() || joiner) {
            statement = true;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            // A dollar-quoted body (a function's, a DO block's) is copied as it is: its
            // `:name`s are not variables.
            None if c == b'$'
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                && let Some(end) = dollar_quote_end(source, i) =>
            {
                text.last_mut().expect("one").push_str(&source[i..end]);
                i = end;
                continue;
            }
            None if c == b'\\' && b.get(i + 1) == Some(&b';') => {
                text.last_mut().expect("one").push(';');
                parts += usize::from(std::mem::take(&mut statement));
                i += 2;
                continue;
            }
            None if c == b':' && b.get(i + 1) == Some(&b':') => {
                text.last_mut().expect("one").push_str("::");
                i += 2;
                continue;
            }
            None if c == b':'
                && b.get(i + 1)
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == b'_') =>
            {
                let start = i + 1;
                let mut end = start;
                while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
                    end += 1;
                }
                vars.push(source[start..end].to_string());
                text.push(String::new());
                i = end;
                continue;
            }
            None => {}
        }
        // Copy the whole UTF-8 character.
        let len = source[i..].chars().next().map_or(1, char::len_utf8);
        text.last_mut().expect("one").push_str(&source[i..i + len]);
        i += len;
    }
    parts += usize::from(statement);
    Command::Sql {
        text,
        vars,
        source: joined(source.trim()),
        store: None,
        parts: parts.max(1),
        semicolon: false,
    }
}

/// SQL as pgbench shows it: `\;` outside quotes is `;`.
fn joined(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') if chars.peek() == Some(&';') => continue,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// `\gset` or `\aset` with its prefix, if `line` is one.
fn store(line: &str) -> Result<Option<Store>, String> {
    let body = line.trim().trim_start_matches('\\');
    let (word, rest) = body
        .split_once(char::is_whitespace)
        .map_or((body, ""), |(w, r)| (w, r.trim()));
    let make: fn(String) -> Store = match word.to_ascii_lowercase().as_str() {
        "gset" => Store::One,
        "aset" => Store::All,
        _ => return Ok(None),
    };
    if rest.split_whitespace().count() > 1 {
        return Err("too many arguments".into());
    }
    if !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("invalid variable prefix: \"{rest}\""));
    }
    Ok(Some(make(rest.to_string())))
}

/// Attaches `store` to the SQL command just read.
fn attach(commands: &mut [Command], s: Store) -> Result<(), String> {
    match commands.last_mut() {
        Some(Command::Sql {
            store: at @ None, ..
        }) => {
            *at = Some(s);
            Ok(())
        }
        _ => Err(format!(
            "\\{} must follow an SQL command",
            match s {
                Store::One(_) => "gset",
                Store::All(_) => "aset",
            }
        )),
    }
}

/// A script's error as pgbench's `syntax_error` words it: the file and line, what is wrong, the
/// command's name, then the line itself and, where the error has a place, a caret under it.
fn syntax_error(
    source: &str,
    no: usize,
    line: &str,
    command: &str,
    what: &str,
    column: Option<usize>,
) -> String {
    let mut s = format!("{source}:{no}: {what} in command \"{command}\"\n{line}");
    if let Some(col) = column {
        let col = line.get(..col).map_or(col, |p| p.chars().count());
        s.push_str(&format!("\n{}^ error found here", " ".repeat(col)));
    }
    s
}

/// Reads script `name` (a file's path, or a builtin's name) from `text`.
pub fn parse(name: &str, text: &str) -> Result<Script, String> {
    let mut commands = Vec::new();
    let mut sources = Vec::new();
    let line_of = |at: usize| text[..at].bytes().filter(|b| *b == b'\n').count() + 1;
    let end_of_line = |at: usize| text[at..].find('\n').map_or(text.len(), |n| at + n);
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let skip = rest.len() - rest.trim_start().len();
        if skip > 0 {
            pos += skip;
            continue;
        }
        if rest.starts_with("--") {
            pos = end_of_line(pos);
            continue;
        }
        let no = line_of(pos);
        // A meta-command (not SQL's `\;`, a statement joined to the next), continued by a
        // backslash at the end of its line.
        if rest.starts_with('\\') && !rest.starts_with("\\;") {
            let mut eol = end_of_line(pos);
            let mut line = text[pos..eol].to_string();
            while line.ends_with('\\') && eol < text.len() {
                line.pop();
                line.push(' ');
                let next = end_of_line(eol + 1);
                line.push_str(&text[eol + 1..next]);
                eol = next;
            }
            pos = eol;
            let shown = line.trim();
            let word = shown
                .trim_start_matches('\\')
                .split(char::is_whitespace)
                .next()
                .unwrap_or("");
            let at = |(e, col): MetaError| syntax_error(name, no, shown, word, &e, col);
            match store(&line).map_err(|e| at((e, None)))? {
                // As pgbench: the file and line, without the command.
                Some(s) => attach(&mut commands, s).map_err(|e| format!("{name}:{no}: {e}"))?,
                None => {
                    commands.push(meta(shown).map_err(at)?);
                    sources.push(shown.to_string());
                }
            }
            continue;
        }
        // SQL, read as psql's lexer reads it: up to a `;` outside quotes, dollar quotes,
        // comments and parentheses, or up to a `\gset` / `\aset`.
        let (code, stop) = scan_sql(text, pos);
        let eol = end_of_line(pos);
        // As pgbench prints it: the command's first line (up to a `\gset` on it, the space
        // before it kept).
        let first = match stop {
            SqlEnd::Store(at) if at <= eol => joined(text[pos..at].trim_start()),
            SqlEnd::Semicolon(at) if at < eol => joined(text[pos..=at].trim()),
            _ => joined(text[pos..eol].trim()),
        };
        let code = code.trim();
        if !code.is_empty() {
            let mut c = sql(code);
            if let (Command::Sql { semicolon, .. }, SqlEnd::Semicolon(_)) = (&mut c, &stop) {
                *semicolon = true;
            }
            commands.push(c);
            sources.push(first);
        }
        match stop {
            SqlEnd::Semicolon(at) => pos = at + 1,
            SqlEnd::Store(at) => {
                let eol = end_of_line(at);
                let st = &text[at..eol];
                let at_line =
                    |e: String| format!("{name}:{}: {e} in command \"{}\"", line_of(at), st.trim());
                let s = store(st)
                    .map_err(at_line)?
                    .ok_or_else(|| at_line("not \\gset".into()))?;
                attach(&mut commands, s).map_err(|e| format!("{name}:{}: {e}", line_of(at)))?;
                pos = eol;
            }
            SqlEnd::Eof => pos = text.len(),
        }
    }
    if commands.is_empty() {
        return Err(format!("empty command list for script \"{name}\""));
    }
    let jumps = resolve(&commands).map_err(|(i, e)| {
        format!(
            "condition error in script \"{name}\" command {}: {e}",
            i + 1
        )
    })?;
    Ok(Script {
        name: name.to_string(),
        commands,
        sources,
        jumps,
    })
}

/// The branch targets of the script's `\if` blocks; an unbalanced block is an error.
/// An error names the command (from 0) where pgbench finds it: the stray branch, or one past
/// the last command for an `\\if` left open.
fn resolve(commands: &[Command]) -> Result<Vec<Option<usize>>, (usize, &'static str)> {
    let mut jumps = vec![None; commands.len()];
    // Open blocks: the index of the last branch command seen, and whether \else was seen.
    let mut open: Vec<(usize, bool)> = Vec::new();
    for (i, c) in commands.iter().enumerate() {
        match c {
            Command::If(_) => open.push((i, false)),
            Command::Elif(_) | Command::Else => {
                let (last, seen_else) = open.last_mut().ok_or((
                    i,
                    if matches!(c, Command::Else) {
                        "\\else without matching \\if"
                    } else {
                        "\\elif without matching \\if"
                    },
                ))?;
                if *seen_else {
                    return Err((
                        i,
                        if matches!(c, Command::Else) {
                            "\\else after \\else"
                        } else {
                            "\\elif after \\else"
                        },
                    ));
                }
                jumps[*last] = Some(i);
                *last = i;
                *seen_else = matches!(c, Command::Else);
            }
            Command::Endif => {
                let (last, _) = open.pop().ok_or((i, "\\endif without matching \\if"))?;
                jumps[last] = Some(i);
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err((commands.len(), "\\if without matching \\endif"));
    }
    Ok(jumps)
}

/// For the fuzz harness (`fuzz/`): `text` read as a pgbench script, and every expression in it
/// (`\set`, `\sleep`, `\if`, `\elif`) evaluated once, with `:scale`, `:client_id` and
/// `:random_seed` defined. Not part of dbsweep's interface.
#[doc(hidden)]
pub fn fuzz_script(text: &str) {
    struct Env(super::expr::PgPrng);
    impl super::expr::Env for Env {
        fn var(&self, name: &str) -> Option<super::expr::Value> {
            matches!(name, "scale" | "client_id" | "random_seed" | "default_seed")
                .then_some(super::expr::Value::Int(1))
        }
        fn rand(&mut self) -> &mut super::expr::PgPrng {
            &mut self.0
        }
    }
    let Ok(script) = parse("fuzz.sql", text) else {
        return;
    };
    let mut env = Env(super::expr::PgPrng::seeded(1));
    for c in &script.commands {
        if let Command::Set(_, e) | Command::If(e) | Command::Elif(e) = c {
            let _ = super::expr::eval(e, &mut env);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtins_read_as_pgbench_reads_them() {
        let s = parse("tpcb-like", BUILTINS[0].2).unwrap();
        assert_eq!(s.commands.len(), 11);
        match &s.commands[5] {
            Command::Sql { text, vars, .. } => {
                assert_eq!(vars, &["delta", "aid"]);
                assert_eq!(
                    text[0],
                    "UPDATE pgbench_accounts SET abalance = abalance + "
                );
            }
            c => panic!("{c:?}"),
        }
        assert_eq!(builtin("sel").unwrap().0, "select-only");
        assert!(builtin("s").unwrap_err().contains("ambiguous"));
        assert!(builtin("x").unwrap_err().contains("no builtin script"));
    }

    #[test]
    fn casts_quotes_comments_and_multi_line_statements() {
        let s = parse(
            "f.sql",
            "SELECT ':a', x::int, :b -- :c\n  FROM t\n  WHERE y = ';';\n\\SLEEP 2 ms\n",
        )
        .unwrap();
        match &s.commands[0] {
            Command::Sql { vars, text, .. } => {
                assert_eq!(vars, &["b"]);
                assert!(text[0].contains("x::int"));
                assert!(text[1].contains("WHERE y = ';'"));
            }
            c => panic!("{c:?}"),
        }
        assert!(matches!(&s.commands[1], Command::Sleep(_, 1000)));
    }

    #[test]
    fn sleep_reads_its_argument_as_pgbench_does() {
        use super::super::command::SleepTime::{Lit, Var};
        for (text, time, unit) in [
            ("\\sleep 2ms\n", Lit(2), 1000),
            ("\\sleep -3 us\n", Lit(-3), 1),
            ("\\sleep +7\n", Lit(7), 1_000_000),
            ("\\sleep :t S\n", Var("t".into()), 1_000_000),
        ] {
            let s = parse("f.sql", text).unwrap();
            assert_eq!(s.commands[0], Command::Sleep(time, unit), "{text:?}");
        }
        for (text, why, caret) in [
            (
                "\\sleep 2weeks\n",
                "unrecognized time unit, must be us, ms or s (weeks)",
                8,
            ),
            (
                "\\sleep x1\n",
                "invalid sleep time, must be an integer (x1)",
                7,
            ),
            (
                "\\sleep 2ms s\n",
                "invalid sleep time, must be an integer (2ms)",
                7,
            ),
            ("\\sleep 1 2 3\n", "too many arguments", 11),
        ] {
            let e = parse("f.sql", text).unwrap_err();
            let want = format!("{}^ error found here", " ".repeat(caret));
            assert!(e.contains(why) && e.ends_with(&want), "{text:?}: {e}");
        }
    }

    #[test]
    fn statements_end_where_psqls_lexer_ends_them() {
        let text = "DO $$\nBEGIN\n  PERFORM 1; -- a ; in a body\nEND$$;\n\
                    SELECT 1; SELECT f(';', $t$ ; $t$, (2; 3));\n\
                    SELECT E'\\';' /* ; /* nested ; */ */, \"a;b\";\n\
                    \\; \\; SELECT 5 AS i \\; \\; \\gset\n";
        let s = parse("f.sql", text).unwrap();
        let sqls: Vec<String> = s
            .commands
            .iter()
            .map(|c| match c {
                Command::Sql { text, .. } => text.concat(),
                c => panic!("{c:?}"),
            })
            .collect();
        assert_eq!(sqls.len(), 5, "{sqls:?}");
        assert!(
            sqls[0].starts_with("DO $$") && sqls[0].ends_with("END$$"),
            "{sqls:?}"
        );
        assert!(sqls[0].contains("PERFORM 1;"));
        assert_eq!(sqls[1], "SELECT 1");
        assert_eq!(sqls[2], "SELECT f(';', $t$ ; $t$, (2; 3))");
        assert!(sqls[3].ends_with("\"a;b\""), "{sqls:?}");
        // The empty statements around `\;` give no result: \gset takes the one that does.
        assert!(matches!(
            &s.commands[4],
            Command::Sql {
                parts: 1,
                store: Some(Store::One(_)),
                ..
            }
        ));
    }

    #[test]
    fn if_blocks_resolve_and_errors_name_the_line() {
        let s = parse(
            "f.sql",
            "\\if :x > 1\nSELECT 1;\n\\elif :x = 1\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\n",
        )
        .unwrap();
        assert_eq!(s.jumps[0], Some(2));
        assert_eq!(s.jumps[2], Some(4));
        assert_eq!(s.jumps[4], Some(6));
        let e = parse("f.sql", "SELECT 1;\n\\set x random(1)\n").unwrap_err();
        assert!(
            e.starts_with("f.sql:2: ") && e.contains("\\set x random(1)"),
            "{e}"
        );
        assert!(
            parse("f.sql", "\\if 1\nSELECT 1;\n")
                .unwrap_err()
                .contains("\\endif")
        );
        assert!(
            parse("f.sql", "\\nosuch\n")
                .unwrap_err()
                .contains("invalid command")
        );
        assert!(parse("f.sql", "  \n").unwrap_err().contains("empty"));
    }

    #[test]
    fn gset_and_aset_attach_to_the_sql_before_them() {
        let s = parse(
            "f.sql",
            "SELECT 1 AS a \\gset p_\nSELECT ';' AS b;\n\\ASET\nSELECT '\\gset' AS c;\n",
        )
        .unwrap();
        let stores: Vec<_> = s
            .commands
            .iter()
            .map(|c| match c {
                Command::Sql { store, .. } => store.clone(),
                c => panic!("{c:?}"),
            })
            .collect();
        assert_eq!(
            stores,
            [
                Some(Store::One("p_".into())),
                Some(Store::All(String::new())),
                None
            ]
        );
        assert_eq!(s.sources[0], "SELECT 1 AS a ");
        for (text, why) in [
            ("\\gset\n", "must follow an SQL command"),
            ("\\set x 1\n\\gset\n", "must follow an SQL command"),
            // As pgbench: a second one after the first is not after an SQL command.
            (
                "SELECT 1 \\gset\n\\aset\n",
                "\\aset must follow an SQL command",
            ),
            ("SELECT 1 \\gset a b\n", "too many arguments"),
            ("SELECT 1 \\gset a-b\n", "invalid variable prefix"),
        ] {
            let e = parse("f.sql", text).unwrap_err();
            assert!(e.starts_with("f.sql:") && e.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn compound_statements_shell_and_pipeline_commands_read_as_pgbench_reads_them() {
        let s = parse(
            "f.sql",
            "SELECT 1 \\;\nSELECT ':x\\;' \\; SELECT :y \\gset p_\n\\SetShell v echo :a ::b\n\\shell true\n\\startPipeline\nSELECT 2;\n\\syncpipeline\n\\endpipeline\n",
        )
        .unwrap();
        match &s.commands[0] {
            Command::Sql {
                text,
                vars,
                parts,
                store,
                ..
            } => {
                assert_eq!(*parts, 3);
                assert_eq!(vars, &["y"]);
                assert_eq!(text[0], "SELECT 1 ;\nSELECT ':x\\;' ; SELECT ");
                assert_eq!(store, &Some(Store::One("p_".into())));
            }
            c => panic!("{c:?}"),
        }
        // -r's line: the first line, `\\;` shown as pgbench shows it.
        assert_eq!(s.sources[0], "SELECT 1 ;");
        assert_eq!(
            s.commands[1],
            Command::Shell(
                Some("v".into()),
                vec!["echo".into(), ":a".into(), "::b".into()]
            )
        );
        assert_eq!(s.commands[2], Command::Shell(None, vec!["true".into()]));
        assert_eq!(s.commands[3], Command::StartPipeline);
        assert_eq!(s.commands[5], Command::SyncPipeline);
        assert_eq!(s.commands[6], Command::EndPipeline);
        for (text, why) in [
            ("\\shell\n", "missing command"),
            ("\\setshell v\n", "missing argument"),
            ("\\startpipeline now\n", "too many arguments"),
        ] {
            let e = parse("f.sql", text).unwrap_err();
            assert!(
                e.starts_with("f.sql:1:") && e.contains(why),
                "{text:?}: {e}"
            );
        }
    }
}
