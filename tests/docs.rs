//! The documentation against the code: the book's reference pages are what the code's
//! definitions make (the command line from clap's, the plan file's keys from its types), every
//! link in the README and the book leads somewhere, and the console examples run as written
//! (trycmd) with the output they show.
//!
//! `DBSWEEP_BLESS=1 cargo test --test tests -- docs::` writes the reference pages anew.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `page` (under docs/) equals `made`, or is written when blessing.
fn keep_equal(page: &str, made: &str) {
    let path = root().join("docs").join(page);
    if std::env::var_os("DBSWEEP_BLESS").is_some() {
        std::fs::write(&path, made).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    if kept != made {
        let line = kept
            .lines()
            .zip(made.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(kept.lines().count().min(made.lines().count()));
        panic!(
            "docs/{page} is not what the code makes (first difference at line {}): run \
             DBSWEEP_BLESS=1 cargo test --test tests -- docs::",
            line + 1
        );
    }
}

#[test]
fn the_command_line_reference_is_the_codes() {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args(["man", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let made = String::from_utf8(out.stdout).unwrap();
    // Every command is in it, each option of run's too.
    for word in [
        "## dbsweep run",
        "## dbsweep sweep",
        "`--threads`",
        "`--rate`",
    ] {
        assert!(made.contains(word), "{word}");
    }
    keep_equal("reference/cli.md", &made);
}

/// The doc comment of an item or field, one paragraph.
fn doc_of(attrs: &[syn::Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join(" ")
}

/// The TOML type of a field's Rust type, in words.
fn toml_type(ty: &syn::Type) -> String {
    let text = quote_type(ty);
    let inner = text
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(&text);
    let inner = inner
        .strip_prefix("Spanned<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(inner);
    match inner {
        "String" | "PathBuf" | "ServerChoice" => "string".into(),
        "bool" => "boolean".into(),
        "u32" | "u64" => "integer".into(),
        "f64" => "number".into(),
        "Vec<u32>" => "array of integers".into(),
        "Vec<String>" => "array of strings".into(),
        "toml::Table" | "BTreeMap<String,toml::Value>" => "table".into(),
        "toml::Value" => "string or number".into(),
        "Class" => "string".into(),
        "LoadDef" => "boolean or string".into(),
        "LimitsDef" => "boolean or table ([limits](#limits))".into(),
        "SearchDef" => "table ([search](#search))".into(),
        "Vec<RoleDef>" => "array of tables ([roles](#roles))".into(),
        "Vec<Spanned<TargetDef>>" => "array of tables ([targets](#targets))".into(),
        "BTreeMap<String,Spanned<ConfigDef>>" => "table of tables ([configs](#configs))".into(),
        "Vec<Spanned<StepDef>>" => "array of tables ([steps](#steps))".into(),
        other => panic!("a plan key of a type the reference does not name: {other}"),
    }
}

fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| {
                let args = match &s.arguments {
                    syn::PathArguments::AngleBracketed(a) => format!(
                        "<{}>",
                        a.args
                            .iter()
                            .map(|g| match g {
                                syn::GenericArgument::Type(t) => quote_type(t),
                                _ => String::new(),
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                    _ => String::new(),
                };
                format!("{}{args}", s.ident)
            })
            .collect::<Vec<_>>()
            .join("::"),
        _ => panic!("a plan key's type the reference cannot read"),
    }
}

#[test]
fn the_plan_files_reference_is_its_types() {
    let src = std::fs::read_to_string(root().join("src/plan/sweep_plan/file.rs")).unwrap();
    let file = syn::parse_file(&src).unwrap();
    let structs: Vec<&syn::ItemStruct> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Struct(s) => Some(s),
            _ => None,
        })
        .collect();
    let tables = [
        ("PlanFile", "The plan", "The file's own keys."),
        (
            "TargetDef",
            "targets",
            "`[[targets]]`: where the steps run (none: embedded SQLite in the sweep directory).",
        ),
        (
            "ConfigDef",
            "configs",
            "`[configs.NAME]`: a configuration every step runs in.",
        ),
        ("StepDef", "steps", "`[[steps]]`: one step of the plan."),
        (
            "LimitsShape",
            "limits",
            "`limits = { ... }`: the probes of `dbsweep limits` (or `limits = true`).",
        ),
        (
            "SearchDef",
            "search",
            "`search = { ... }` of a step: a capacity search.",
        ),
        (
            "RoleDef",
            "roles",
            "`roles = [{ ... }]` of a step: groups of clients side by side.",
        ),
    ];
    let mut made = String::from(
        "# Plan file\n\nA plan is a TOML file (`dbsweep sweep PLAN.toml`); the built-in plans are in \
         `plans/`, and a workload family's own in its folder (`src/workload/ibench/plan.toml`, \
         `src/workload/linkbench/plan.toml`). Every key below, made from the plan's own types in \
         `src/plan/sweep_plan/file.rs` (a test keeps this page equal to them); unknown keys are \
         refused with the line they are on.\n",
    );
    for (name, title, what) in tables {
        let s = structs
            .iter()
            .find(|s| s.ident == name)
            .unwrap_or_else(|| panic!("no struct {name}"));
        made.push_str(&format!(
            "\n## {title}\n\n{what}\n\n| key | type | what it is |\n|---|---|---|\n"
        ));
        for field in &s.fields {
            let key = field.ident.as_ref().unwrap().to_string();
            let doc = doc_of(&field.attrs);
            assert!(!doc.is_empty(), "{name}.{key} has no doc comment");
            made.push_str(&format!(
                "| `{key}` | {} | {} |\n",
                toml_type(&field.ty),
                doc.replace('|', "\\|")
            ));
        }
    }
    keep_equal("reference/plan.md", &made);
}

#[test]
fn the_results_files_reference_is_its_schema() {
    let schema = crate::util::read_json(&root().join("schema/results.schema.json"));
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut made = format!(
        "# Results file\n\n{}\n\nEach run writes one JSON object (`--output FILE`, and every step of \
         a sweep under `steps/`), checked against the schema in `schema/results.schema.json`. Its \
         keys, made from the schema (a test keeps this page equal to it); the schema has each \
         key's whole shape.\n\n| key | always there | type | what it is |\n|---|---|---|---|\n",
        schema["description"].as_str().unwrap()
    );
    let props = schema["properties"].as_object().unwrap();
    for (key, p) in props {
        let ty = if let Some(t) = p.get("type") {
            match t {
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(" or "),
                v => v.as_str().unwrap_or("").to_string(),
            }
        } else if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
            r.trim_start_matches("#/$defs/").to_string()
        } else if p.get("oneOf").is_some() {
            "null or object".into()
        } else {
            "any".into()
        };
        let what = p["description"]
            .as_str()
            .unwrap_or_else(|| panic!("the schema's {key} has no description"));
        made.push_str(&format!(
            "| `{key}` | {} | {ty} | {} |\n",
            if required.contains(&key.as_str()) {
                "yes"
            } else {
                ""
            },
            what.replace('|', "\\|").replace('\n', " ")
        ));
    }
    keep_equal("reference/results.md", &made);
}

/// The Markdown files of the README and the book.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

/// The anchors of a page's headings, as mdBook makes them.
fn anchors(text: &str) -> BTreeSet<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out = BTreeSet::new();
    let mut heading: Option<String> = None;
    for ev in Parser::new(text) {
        match ev {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let h = heading.take().unwrap();
                let id: String = h
                    .trim()
                    .to_lowercase()
                    .chars()
                    .filter_map(|c| {
                        if c.is_alphanumeric() || c == '_' || c == '-' {
                            Some(c)
                        } else if c.is_whitespace() {
                            Some('-')
                        } else {
                            None
                        }
                    })
                    .collect();
                out.insert(id);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_link_in_the_readme_and_the_book_leads_somewhere() {
    use pulldown_cmark::{Event, Parser, Tag};
    let mut broken = Vec::new();
    let mut links = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for ev in Parser::new(&text) {
            let (Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. })) = ev
            else {
                continue;
            };
            let url = dest_url.to_string();
            if url.contains("://") || url.starts_with("mailto:") {
                continue;
            }
            links += 1;
            let (file, anchor) = url.split_once('#').unwrap_or((&url, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {url} (no such file)", page.display()));
                continue;
            }
            if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let there = std::fs::read_to_string(&target).unwrap();
                if !anchors(&there).contains(anchor) {
                    broken.push(format!("{}: {url} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(links > 50, "only {links} links: the pages were not read");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The pages whose console blocks the tests run (the others' command blocks each say why
/// they are not run here).
const CHECKED: &[&str] = &["README.md", "docs/getting-started/index.md"];

/// Whether a code block's text holds a command: a line whose first word is a program the
/// pages tell the reader to run.
fn holds_a_command(code: &str) -> bool {
    code.lines().any(|l| {
        let l = l.trim_start().trim_start_matches("$ ");
        [
            "dbsweep", "sysbench", "pgbench", "cargo", "mdbook", "scripts/", "bench/", "ssh ",
        ]
        .iter()
        .any(|p| l.starts_with(p))
    })
}

#[test]
fn every_command_block_runs_or_says_why() {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};
    let mut bad = Vec::new();
    let mut blocks = 0;
    for page in pages() {
        let rel = page
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // The generated reference's synopses are usage lines, not commands to run.
        if rel.starts_with("docs/reference/") {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        let mut said = false;
        let mut code: Option<(String, bool, usize)> = None;
        for (ev, range) in Parser::new(&text).into_offset_iter() {
            match ev {
                Event::Html(h) | Event::InlineHtml(h) => {
                    said = h.trim_start().starts_with("<!-- not run here:");
                }
                Event::Start(Tag::CodeBlock(kind)) => {
                    let console = matches!(&kind, CodeBlockKind::Fenced(info)
                        if info.split(',').next() == Some("console"));
                    code = Some((String::new(), console, range.start));
                }
                Event::Text(t) => {
                    if let Some((c, _, _)) = code.as_mut() {
                        c.push_str(&t);
                    }
                }
                Event::End(pulldown_cmark::TagEnd::CodeBlock) => {
                    let (c, console, at) = code.take().unwrap();
                    if holds_a_command(&c) {
                        blocks += 1;
                        let line = text[..at].lines().count() + 1;
                        if console && !CHECKED.contains(&rel.as_str()) {
                            bad.push(format!("{rel}:{line}: a console block no test runs"));
                        } else if !console && !said {
                            bad.push(format!(
                                "{rel}:{line}: a command block neither run nor saying why"
                            ));
                        }
                    }
                    said = false;
                }
                Event::Start(_) => said = false,
                _ => {}
            }
        }
    }
    assert!(
        blocks > 20,
        "only {blocks} command blocks: the pages were not read"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_console_examples_run_as_written() {
    // Each page in a scratch directory of its own (the examples write files where they run).
    let s = crate::util::Scratch::new();
    let cases = trycmd::TestCases::new();
    cases.register_bin("dbsweep", assert_cmd::cargo::cargo_bin("dbsweep"));
    cases.timeout(std::time::Duration::from_secs(300));
    for page in CHECKED {
        let name = page.replace('/', "-");
        let dir = s.path(name.trim_end_matches(".md"));
        std::fs::create_dir_all(&dir).unwrap();
        let case = dir.join("case.md");
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        std::fs::write(&case, close_outputs(&text)).unwrap();
        // An empty `.in` and `.out`: the examples run in a sandbox copied from the first.
        std::fs::create_dir_all(dir.join("case.in")).unwrap();
        std::fs::create_dir_all(dir.join("case.out")).unwrap();
        std::fs::write(dir.join("case.in/.keep"), "").unwrap();
        cases.case(case);
    }
}

/// The page as trycmd is given it: each shown output that does not end in `...` gets an
/// empty line after it. trycmd drops the last newline of every shown output, and its match
/// of a whole last line then fails on the newline the command did print.
fn close_outputs(text: &str) -> String {
    let mut out = String::new();
    let mut in_console = false;
    let mut last = "";
    for line in text.lines() {
        let ends_output = in_console && (line.starts_with("$ ") || line.starts_with("```"));
        let shown = !(last == "..."
            || last.starts_with("$ ")
            || last.starts_with("> ")
            || last.starts_with("```"));
        if ends_output && shown {
            out.push('\n');
        }
        if line.starts_with("```") {
            in_console = !in_console && line.trim_start_matches('`').trim() == "console";
        }
        out.push_str(line);
        out.push('\n');
        last = line;
    }
    out
}

/// `cargo bench --bench NAME -- ARGS` hands the bench `ARGS --bench`: every bench whose
/// arguments clap parses takes a `bench` flag, or the command bench/README.md gives exits 2.
/// And every such command names a bench target of Cargo.toml.
#[test]
fn every_bench_runs_as_documented() {
    let root = root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let targets: BTreeSet<String> = manifest
        .split("[[bench]]")
        .skip(1)
        .filter_map(|t| {
            let line = t.lines().find(|l| l.trim_start().starts_with("name"))?;
            Some(line.split('"').nth(1)?.to_string())
        })
        .collect();
    let readme = std::fs::read_to_string(root.join("bench/README.md")).unwrap();
    let documented: BTreeSet<String> = readme
        .split("cargo bench --bench ")
        .skip(1)
        .filter_map(|s| s.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(
        !documented.is_empty(),
        "bench/README.md gives no cargo bench command"
    );
    let unknown: Vec<_> = documented.difference(&targets).collect();
    assert!(
        unknown.is_empty(),
        "bench/README.md names benches Cargo.toml lacks: {unknown:?}"
    );
    let mut refusing = Vec::new();
    for name in &targets {
        let path = root.join(format!("bench/{name}.rs"));
        let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for item in &file.items {
            let syn::Item::Struct(s) = item else { continue };
            let parser = s.attrs.iter().any(|a| {
                a.path().is_ident("derive")
                    && a.meta
                        .require_list()
                        .is_ok_and(|l| l.tokens.to_string().contains("Parser"))
            });
            let takes_bench = s.fields.iter().any(|f| {
                f.ident.as_ref().is_some_and(|i| i == "bench")
                    && matches!(&f.ty, syn::Type::Path(p) if p.path.is_ident("bool"))
            });
            if parser && !takes_bench {
                refusing.push(format!("{} ({})", name, s.ident));
            }
        }
    }
    assert!(
        refusing.is_empty(),
        "these benches refuse the --bench cargo appends: {refusing:?}"
    );
}

/// Every whole plan the book shows (a `toml` block with a `name` and steps) is one dbsweep
/// takes: `sweep --dry-run` prints its schedule. The paths a reader gives are this machine's
/// for it: a data directory a scratch one, a build's tree PostgreSQL 15's.
#[test]
fn every_plan_in_the_book_is_a_plan() {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let s = crate::util::Scratch::new();
    let data = s.path("data");
    std::fs::create_dir(&data).unwrap();
    // Debian's PostgreSQL 15, which scripts/machine installs.
    let tree = PathBuf::from("/usr/lib/postgresql/15");
    let paths = regex::Regex::new(r#"(?m)^(datadir_in|basedir) = "/[^"]*""#).unwrap();
    let named = regex::Regex::new(r"(?m)^name = ").unwrap();
    let mut plans = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut code: Option<String> = None;
        for ev in Parser::new(&text) {
            match ev {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if &*info == "toml" => {
                    code = Some(String::new())
                }
                Event::Text(t) => {
                    if let Some(c) = code.as_mut() {
                        c.push_str(&t);
                    }
                }
                Event::End(TagEnd::CodeBlock) => {
                    let Some(plan) = code.take() else { continue };
                    if !named.is_match(&plan) || !plan.contains("[[steps]]") {
                        continue;
                    }
                    let plan = paths.replace_all(&plan, |c: &regex::Captures| {
                        let to = if &c[1] == "datadir_in" { &data } else { &tree };
                        format!("{} = {:?}", &c[1], to.display().to_string())
                    });
                    plans += 1;
                    let file = s.path(&format!("plan{plans}.toml"));
                    std::fs::write(&file, plan.as_ref()).unwrap();
                    let out = crate::util::dbsweep_std()
                        .arg("sweep")
                        .arg(&file)
                        .arg("--dry-run")
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success()
                            && String::from_utf8_lossy(&out.stdout).contains("estimated duration"),
                        "{}: a plan dbsweep refuses:\n{plan}\n{}",
                        page.display(),
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                _ => {}
            }
        }
    }
    assert!(plans >= 4, "only {plans} plans: the pages were not read");
}
