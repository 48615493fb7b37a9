//! The plan's own keys: its name, client counts, table sizes, times, repeats, options, and
//! the client hosts.

use super::super::cells::{Host, Source, SweepTarget, TargetSpec};
use super::super::file::{MAX_REPEAT, PlanFile};
use super::super::options::{check_options, check_seconds};
use super::{configs_have_profile, is_label};
use crate::error::Error;

/// The keys of the plan itself (not its targets, configurations or steps).
pub(super) fn plan_keys(src: &Source, file: &PlanFile) -> Result<(), Error> {
    // The name becomes part of the sweep directory's name: no path separators, no dot-dots.
    if !file.name.is_empty()
        && (!is_label(&file.name.replace('.', "")) || file.name.starts_with('.'))
    {
        return Err(src.key_error(
            "name",
            format!(
                "{:?}: use letters, digits, ., - and _ only, not starting with a dot",
                file.name
            ),
        ));
    }
    if file.clients.is_empty()
        || file
            .clients
            .iter()
            .any(|c| *c == 0 || *c > crate::plan::MAX_CLIENTS)
    {
        return Err(src.key_error(
            "clients",
            format!(
                "needs one or more client counts, each from 1 to {}",
                crate::plan::MAX_CLIENTS
            ),
        ));
    }
    if let Some((i, c)) = file
        .clients
        .iter()
        .enumerate()
        .find(|(i, c)| file.clients[..*i].contains(c))
    {
        // A cell is named by its client count: a second cell of one count would be taken for
        // the first one's, already run.
        return Err(src.key_error(
            "clients",
            format!(
                "{c} is given twice (entry {}): each client count runs once; `repeat = N` runs \
                 every step N times",
                i + 1
            ),
        ));
    }
    if file.tables == 0 {
        return Err(src.key_error("tables", "must be at least 1"));
    }
    if !(1..=MAX_REPEAT).contains(&file.repeat) {
        return Err(src.key_error(
            "repeat",
            format!("{} must be from 1 to {MAX_REPEAT}", file.repeat),
        ));
    }
    if let Some(l) = &file.limits {
        l.shape(std::path::PathBuf::new(), 4096)
            .map_err(|e| src.key_error("limits", e))?;
    }
    if let Some(d) = &file.detect {
        super::detect_fraction(d).map_err(|e| src.key_error("detect", e))?;
    }
    if let Some(m) = file.max_repeat
        && !(1..=100).contains(&m)
    {
        return Err(src.key_error(
            "max_repeat",
            format!("{m} must be from 1 to 100 (the rounds `detect` may run)"),
        ));
    }
    if let Some(n) = file.rerun_busy
        && n > 10
    {
        return Err(src.key_error(
            "rerun_busy",
            format!(
                "{n} must be from 0 to 10 (the runs again of a cell measured on a busy machine)"
            ),
        ));
    }
    if file.table_size == 0 || file.table_size > i32::MAX as u64 {
        return Err(src.key_error(
            "table_size",
            format!("{} must be between 1 and {}", file.table_size, i32::MAX),
        ));
    }
    check_seconds(src, "read_time", file.read_time, 0.1)?;
    check_seconds(src, "write_time", file.write_time, 0.1)?;
    check_seconds(src, "warmup_time", file.warmup_time, 0.1)?;
    if let Some(p) = file.postwrite_pause {
        check_seconds(src, "postwrite_pause", p, 0.0)?;
    }
    check_options(src, 0..0, &file.options).map_err(|_| {
        src.key_error(
            "options",
            "every value must be a string, number or boolean, and none an option the sweep sets",
        )
    })?;
    Ok(())
}

/// `client_hosts`: each a host dbsweep reaches, an equal share of every client count, and
/// only over targets given by URL.
pub(super) fn client_hosts(
    src: &Source,
    file: &PlanFile,
    targets: &[SweepTarget],
) -> Result<(), Error> {
    if file.client_hosts.is_empty() {
        return Ok(());
    }
    for h in &file.client_hosts {
        Host::parse(h).map_err(|e| src.entry_error("client_hosts", h, e))?;
    }
    let n = file.client_hosts.len() as u32;
    if let Some(c) = file.clients.iter().find(|c| **c % n != 0) {
        return Err(src.key_error(
            "client_hosts",
            format!(
                "clients = {c} with {n} client_hosts: each host runs an equal share, so give multiples of {n}"
            ),
        ));
    }
    if let Some(t) = targets
        .iter()
        .find(|t| !matches!(t.spec, TargetSpec::Url(_)))
    {
        return Err(src.key_error(
            "client_hosts",
            format!(
                "client_hosts need targets given by url (the client hosts connect to the database themselves), and target {} is not one",
                t.name
            ),
        ));
    }
    if configs_have_profile(file) {
        return Err(src.key_error(
            "client_hosts",
            "profile = true does not go with client_hosts: perf records on the database's host",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{ONE_STEP, refused};

    #[test]
    fn the_plans_own_keys_name_their_line() {
        let e = refused(&format!("name = \"x\"\nclients = [1, 2, 1]\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:2: clients: 1 is given twice"), "{e}");
        let e = refused(&format!("repeat = 0\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:1: repeat"), "{e}");
        let e = refused(&format!("name = \"../x\"\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:1: name"), "{e}");
    }

    #[test]
    fn client_hosts_share_every_count_and_need_url_targets() {
        let hosts = "client_hosts = [\"ssh://a\", \"ssh://b\"]\n";
        let e = refused(&format!(
            "clients = [3]\n{hosts}[[targets]]\nurl = \"postgres://u@h/db\"\n{ONE_STEP}"
        ));
        assert!(e.contains("multiples of 2"), "{e}");
        let e = refused(&format!("clients = [2]\n{hosts}{ONE_STEP}"));
        assert!(e.contains("targets given by url"), "{e}");
    }
}
