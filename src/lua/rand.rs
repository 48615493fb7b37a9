//! `sysbench.rand`: sysbench's random functions over dbsweep's generators, per state.

use std::rc::Rc;

use mlua::{Lua, Table};

use super::state::StateData;
use crate::workload::rand::{Dist, RandType};

pub(super) fn install_rand(lua: &Lua, sb: &Table, data: &Rc<StateData>) -> mlua::Result<()> {
    let rand = lua.create_table()?;
    let with = |ty: Option<RandType>| {
        let d = data.clone();
        lua.create_function(move |_, (a, b): (i64, i64)| {
            let opts = &d.ctx.rand;
            let ty = ty.unwrap_or(opts.rand_type);
            let (lo, hi) = (a.min(b), a.max(b));
            let n = (hi - lo) as u64 + 1;
            let mut r = d.rand.borrow_mut();
            if ty == RandType::Uniform {
                return Ok(lo + r.uniform(0, n - 1) as i64);
            }
            let mut dists = d.dists.borrow_mut();
            let dist = dists.entry((ty as u8, n)).or_insert_with(|| {
                let mut o = opts.clone();
                o.rand_type = ty;
                Dist::new(&o, n)
            });
            Ok(lo + r.draw(dist, 1, n) as i64 - 1)
        })
    };
    rand.set("default", with(None)?)?;
    rand.set("uniform", with(Some(RandType::Uniform))?)?;
    rand.set("gaussian", with(Some(RandType::Gaussian))?)?;
    rand.set("special", with(Some(RandType::Special))?)?;
    rand.set("pareto", with(Some(RandType::Pareto))?)?;
    rand.set("zipfian", with(Some(RandType::Zipfian))?)?;
    let d = data.clone();
    rand.set(
        "unique",
        lua.create_function(move |_, ()| {
            // Distinct per state and per call: the thread number in the high bits.
            let v = d.unique.get();
            d.unique.set(v + 1);
            Ok((v & 0xFFFF_FFFF) as i64
                ^ ((v >> 32) as i64).wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "string",
        lua.create_function(move |_, template: String| {
            let mut s = String::with_capacity(template.len());
            d.rand.borrow_mut().fill_template(&template, &mut s);
            Ok(s)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "varstring",
        lua.create_function(move |_, (lo, hi): (u64, u64)| {
            let mut r = d.rand.borrow_mut();
            let n = r.uniform(lo.min(hi), lo.max(hi));
            let template: String = (0..n).map(|_| '@').collect();
            let mut s = String::new();
            r.fill_template(&template, &mut s);
            Ok(s)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(d.rand.borrow_mut().unit()))?,
    )?;
    let d = data.clone();
    rand.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| {
            Ok(d.rand.borrow_mut().uniform(0, i64::MAX as u64) as i64)
        })?,
    )?;
    sb.set("rand", rand)
}
