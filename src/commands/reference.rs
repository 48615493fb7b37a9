//! `dbsweep man --markdown`: the command line's reference as Markdown, made from clap's
//! definitions (the book's `docs/reference/cli.md` is this output, checked by a test).

use std::fmt::Write as _;

use crate::cli::Cli;
use crate::error::{Error, Outcome};

pub(super) fn markdown() -> Result<Outcome, Error> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut out = String::new();
    out.push_str(
        "# Command line\n\n\
         Every command and option, as `dbsweep --help` gives them; made from the code's \
         definitions by `dbsweep man --markdown` (a test keeps this page equal to it).\n",
    );
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    out.push_str("\n| command | what it does |\n|---|---|\n");
    for sub in &subs {
        let _ = writeln!(
            out,
            "| [`{}`](#dbsweep-{}) | {} |",
            sub.get_name(),
            sub.get_name(),
            cell(&first_line(sub.get_about()))
        );
    }
    section(&mut out, &cmd, "dbsweep", 2);
    for sub in subs {
        section(&mut out, sub, &format!("dbsweep {}", sub.get_name()), 2);
        for inner in sub
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            section(
                &mut out,
                inner,
                &format!("dbsweep {} {}", sub.get_name(), inner.get_name()),
                3,
            );
        }
    }
    std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes())
        .map_err(|e| Error::Run(format!("writing the reference: {e}")))?;
    Ok(Outcome::Done)
}

fn first_line(s: Option<&clap::builder::StyledStr>) -> String {
    s.map(|s| s.to_string().lines().next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// Text fit for one table cell: one line, the table's bar escaped.
fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn section(out: &mut String, cmd: &clap::Command, path: &str, level: usize) {
    let _ = write!(out, "\n{} {path}\n\n", "#".repeat(level));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(out, "{}\n", about.to_string().trim());
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let _ = writeln!(out, "    {}", usage.replace('\n', "\n    "));
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    if args.is_empty() {
        return;
    }
    out.push_str("\n| option | value | default | what it does |\n|---|---|---|---|\n");
    for a in args {
        let name = match (a.get_long(), a.get_short()) {
            (Some(l), Some(s)) => format!("`-{s}`, `--{l}`"),
            (Some(l), None) => format!("`--{l}`"),
            (None, Some(s)) => format!("`-{s}`"),
            (None, None) => format!("`{}`", a.get_id().as_str().to_uppercase()),
        };
        let takes = a.get_num_args().is_some_and(|n| n.takes_values());
        let value = if takes {
            let names = a
                .get_value_names()
                .map(|v| {
                    v.iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
            let possible: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|p| !p.is_hide_set())
                .map(|p| p.get_name().to_string())
                .collect();
            if possible.is_empty() || possible == ["true", "false"] {
                names
            } else {
                possible.join(" \\| ")
            }
        } else {
            String::new()
        };
        let default = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(",");
        let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string());
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} |",
            cell(&value),
            cell(&default),
            cell(help.as_deref().unwrap_or(""))
        );
    }
}
