//! `sysbench.histogram`: `new(size, min, max)`, `h:update(value)`, `h:print()`, as sysbench's
//! Lua API has them (its log-scale buckets, printed as its `--histogram` report is).

use std::cell::RefCell;

use mlua::{Lua, Table, UserData, UserDataMethods};

use crate::output::log_histogram::LogHistogram;

struct Hist(RefCell<LogHistogram>);

impl UserData for Hist {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("update", |_, h, v: f64| {
            h.0.borrow_mut().add(v, 1);
            Ok(())
        });
        m.add_method("print", |_, h, ()| {
            print!("{}", h.0.borrow().text());
            Ok(())
        });
    }
}

/// Installs `sysbench.histogram` into `sb`.
pub fn install(lua: &Lua, sb: &Table) -> mlua::Result<()> {
    let t = lua.create_table()?;
    t.set(
        "new",
        lua.create_function(|_, (size, min, max): (usize, f64, f64)| {
            LogHistogram::new(size, min, max)
                .map(|h| Hist(RefCell::new(h)))
                .ok_or_else(|| {
                    mlua::Error::runtime(format!(
                        "sysbench.histogram.new({size}, {min}, {max}): at least 2 buckets from a least value above 0 to a greater one"
                    ))
                })
        })?,
    )?;
    sb.set("histogram", t)
}
