//! `dbsweep limits`: the machine's ceilings on the file system that holds the data (a given
//! directory, a SQLite file's, a local server's data directory), printed as a table, with the
//! lines of what could not be probed on stderr; kept in the device's cache and, with `--out`,
//! in a JSON file.

use std::path::PathBuf;

use crate::cli::LimitsOpts;
use crate::db;
use crate::error::{Error, Outcome};
use crate::limits::{self, Measured, Said, Shape};

/// Where to probe and the page to probe with, from `--dir` or `--target` (whose data may be
/// on another host: then only its connection is probed).
pub fn shape_of(o: &LimitsOpts) -> Result<(Shape, Option<String>), Error> {
    let (dir, page, away) = match (&o.dir, &o.target) {
        (Some(d), None) => (d.clone(), None, None),
        (None, Some(url)) => {
            let p = limits::target::of_url(url, o.timeouts)?;
            (p.dir.unwrap_or_default(), Some(p.page), p.note)
        }
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "limits: --dir and --target name the place twice: give one".into(),
            ));
        }
        (None, None) => (PathBuf::from("."), None, None),
    };
    let mut s = Shape::new(dir, o.page_size.or(page).unwrap_or(16384));
    if let Some(b) = o.log_block {
        s.log_block = b;
    }
    s.writers = o.writers;
    s.seconds = o.seconds;
    if let Some(size) = &o.size {
        s.size = crate::plan::sweep_plan::parse_size(size)
            .filter(|&n| n >= 1 << 20)
            .ok_or_else(|| Error::Option {
                option: "size".into(),
                why: format!("{size:?} is not a size of at least 1M (512M, 2G)"),
            })?;
    }
    if let Some(d) = &o.depths {
        s.depths = d
            .split(',')
            .map(|x| {
                x.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| (1..=4096).contains(&n))
            })
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| Error::Option {
                option: "depths".into(),
                why: format!("{d:?} is not a list of queue depths from 1 to 4096 (1,4,16,64)"),
            })?;
    }
    if let Some(only) = &o.only {
        s.kinds = only
            .split(',')
            .map(|w| limits::Kind::ALL.into_iter().find(|k| k.name() == w.trim()))
            .collect::<Option<Vec<_>>>()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| Error::Option {
                option: "only".into(),
                why: format!(
                    "{only:?} is not a list of probes ({})",
                    limits::Kind::ALL.map(|k| k.name()).join(", ")
                ),
            })?;
    }
    for (name, v) in [("page-size", s.page), ("log-block", s.log_block)] {
        if !(512..=64 << 20).contains(&v) || v % 512 != 0 {
            return Err(Error::Option {
                option: name.into(),
                why: format!("{v} is not a multiple of 512 bytes from 512 to 64M"),
            });
        }
    }
    if !(s.seconds > 0.0 && s.seconds <= 3600.0) {
        return Err(Error::Option {
            option: "seconds".into(),
            why: format!("{} is not from 0 to 3600 seconds", s.seconds),
        });
    }
    if s.writers == 0 || s.writers > 1024 {
        return Err(Error::Option {
            option: "writers".into(),
            why: format!("{} is not from 1 to 1024", s.writers),
        });
    }
    Ok((s, away))
}

pub fn limits(o: &LimitsOpts) -> Result<Outcome, Error> {
    let (shape, away) = shape_of(o)?;
    let server = o.target.as_deref().filter(|u| db::sqlite_dir(u).is_none());
    if let Some(why) = away {
        // The disk is another host's: the connection is what can be measured from here.
        let url = server.expect("only a server's data is away");
        eprintln!("limits: {why}");
        let Some(n) = limits::network::probe(url, shape.seconds, o.timeouts)? else {
            return Ok(Outcome::Interrupted);
        };
        println!("{}", limits::network::line(&n));
        let mut l = limits::Limits::of_network_only(&shape, why);
        l.network = Some(n);
        return finish(o, &l, true);
    }
    limits::check_dir(&shape.dir)?;
    if o.cached
        && let Some(l) = limits::cached(&shape)
    {
        print(&l, true);
        return finish(o, &l, false);
    }
    println!(
        "limits of {}: {} per probe, a {} MiB probe file",
        shape.dir.display(),
        seconds_words(shape.seconds),
        shape.size >> 20
    );
    println!("{}", limits::header());
    let mut say = |s: Said| match s {
        Said::Figure(f) => println!("{}", limits::line(f)),
        Said::Note(n) => eprintln!("limits: {n}"),
    };
    let mut l = match limits::measure(&shape, &mut say)? {
        Measured::Interrupted => return Ok(Outcome::Interrupted),
        Measured::Done(l) => {
            limits::keep(&shape, &l);
            l
        }
    };
    if let Some(url) = server {
        match limits::network::probe(url, shape.seconds, o.timeouts)? {
            None => return Ok(Outcome::Interrupted),
            Some(n) => {
                println!("{}", limits::network::line(&n));
                l.network = Some(n);
            }
        }
    }
    finish(o, &l, false)
}

fn finish(o: &LimitsOpts, l: &limits::Limits, network_only: bool) -> Result<Outcome, Error> {
    if let Some(out) = &o.out {
        crate::results::write_atomic(out, l)?;
    }
    if l.figures.is_empty() && !network_only {
        // Why is the note's one line, said already.
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Done)
}

fn print(l: &limits::Limits, cached: bool) {
    if cached {
        println!(
            "limits of {} (measured within the day, from the cache)",
            l.dir
        );
    }
    println!("{}", limits::header());
    for f in &l.figures {
        println!("{}", limits::line(f));
    }
    for n in &l.notes {
        eprintln!("limits: {n}");
    }
}

fn seconds_words(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}
