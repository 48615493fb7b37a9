//! A step's options as a typed run: the plan's table (its options, then the step's own) read
//! straight into the run's options (`RunArgs`), whose defaults are the command line's and whose
//! values `RunPlan::from_args` judges, the one validator of a run. No command line is made on
//! the way; a value written as text where a number or a switch is wanted (`--option NAME=VALUE`,
//! `events = "50"`) is read as the command line reads it; each workload family's own
//! options are read into its options type by their names.
//!
//! Two callers still get a command line, because theirs is one: a client host runs `dbsweep
//! run` in another process, and a sysbench Lua script reads its options from its command line.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};

use super::options::{option_args, option_name};
use crate::cli::{RoleSpec, RunArgs};
use crate::workload::{FamilyArgs, OptionsReader};

/// A workload or load step's options.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// As written: the plan's options its workload takes, then the step's own (which win).
    pub table: toml::Table,
    /// A step of roles: the measured role's clients (they replace the cell's) and rate.
    pub clients: Option<u32>,
    pub rate: Option<f64>,
    /// A step of roles: the groups beside the measured one.
    pub roles: Vec<RoleSpec>,
}

impl StepOptions {
    /// The run's options of these (the sweep sets its own beside them); Err names the option.
    pub fn run_args(&self) -> Result<RunArgs, String> {
        // The options every run shares, then each family's own out of the rest.
        let shared = field_names::<RunArgs>();
        let (own, rest): (toml::Table, toml::Table) = self
            .table
            .clone()
            .into_iter()
            .partition(|(k, _)| shared.contains(&k.replace('-', "_").as_str()));
        let mut args: RunArgs = read(&own)?;
        let mut families = Families(rest);
        args.families = FamilyArgs::read(&mut families)?;
        if let Some(k) = families.0.keys().next() {
            return Err(format!(
                "option {k}: dbsweep run has no such option (`dbsweep run --help` lists them)"
            ));
        }
        if let Some(r) = self.rate {
            args.rate = r;
        }
        args.role = self.roles.clone();
        Ok(args)
    }

    /// One option read as the run reads it (None: not given, or not of that type).
    pub fn value<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Option<T> {
        let name = option_name(name);
        let (_, v) = self
            .table
            .iter()
            .rev()
            .find(|(k, _)| option_name(k) == name)?;
        T::deserialize(Lenient(v.clone())).ok()
    }

    /// The options as a command line's words (`--name=value`): for a client host's `dbsweep
    /// run` and a Lua script's command line only.
    pub fn words(&self) -> Vec<String> {
        let mut out = option_args(&self.table);
        if let Some(c) = self.clients {
            out.push(format!("--threads={c}"));
        }
        if let Some(r) = self.rate {
            out.push(format!("--rate={r}"));
        }
        for r in &self.roles {
            let mut spec = r.workload.clone();
            if let Some(c) = r.clients {
                spec.push_str(&format!(",clients={c}"));
            }
            if let Some(x) = r.rate {
                spec.push_str(&format!(",rate={x}"));
            }
            out.push(format!("--role={spec}"));
        }
        out
    }

    /// What the schedule prints of them.
    pub fn describe(&self) -> String {
        self.words().join(" ")
    }
}

/// The options of a table not read yet: a family takes the names its options type has.
struct Families(toml::Table);

impl OptionsReader for Families {
    fn read<T: for<'de> Deserialize<'de>>(&mut self) -> Result<T, String> {
        let names = field_names::<T>();
        let (mine, rest): (toml::Table, toml::Table) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|(k, _)| names.contains(&k.replace('-', "_").as_str()));
        self.0 = rest;
        read(&mine)
    }
}

/// The names of struct `T`'s fields as serde reads them (their aliases too): asked of its
/// `Deserialize`, which hands them to the deserializer.
fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Names<'a>(&'a std::cell::Cell<&'static [&'static str]>);
    impl<'de> de::Deserializer<'de> for Names<'_> {
        type Error = ValueError;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ValueError> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, ValueError> {
            self.0.set(fields);
            Err(de::Error::custom("only its fields were asked"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let names = std::cell::Cell::new(&[][..]);
    let _ = T::deserialize(Names(&names));
    names.get()
}

/// The table read into `T`'s fields (names with `-` or `_`); an unknown name or a value of the
/// wrong kind is an error naming the option.
pub fn read<T: for<'de> Deserialize<'de>>(table: &toml::Table) -> Result<T, String> {
    T::deserialize(TableDe(table)).map_err(|e| e.0)
}

#[derive(Debug)]
pub struct ValueError(String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

impl de::Error for ValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ValueError(msg.to_string())
    }
}

/// The plan's table as a struct of options.
struct TableDe<'a>(&'a toml::Table);

impl<'de> de::Deserializer<'de> for TableDe<'_> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom("options are a table of names and values"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        let mut entries = Vec::new();
        for (k, v) in self.0 {
            let field = k.replace('-', "_");
            if !fields.contains(&field.as_str()) {
                return Err(ValueError(format!(
                    "option {k}: dbsweep run has no such option (`dbsweep run --help` lists them)"
                )));
            }
            if field == "metrics_listen" {
                return Err(ValueError(format!(
                    "option {k}: live metrics are the sweep's, served across its steps: set \
                     metrics_listen at the plan's top or --metrics-listen"
                )));
            }
            entries.push((k.clone(), field, v.clone()));
        }
        visitor.visit_map(Entries {
            entries: entries.into_iter(),
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct Entries {
    entries: std::vec::IntoIter<(String, String, toml::Value)>,
    value: Option<(String, toml::Value)>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = ValueError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ValueError> {
        let Some((written, field, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((written, v));
        seed.deserialize(field.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ValueError> {
        let (written, v) = self
            .value
            .take()
            .ok_or_else(|| ValueError("a value without its name".into()))?;
        seed.deserialize(Lenient(v))
            .map_err(|e| ValueError(format!("option {written}: {e}")))
    }
}

/// One option's value, read as the command line reads the same text.
struct Lenient(toml::Value);

impl Lenient {
    fn text(&self) -> Option<&str> {
        match &self.0 {
            toml::Value::String(s) => Some(s),
            _ => None,
        }
    }

    fn number<T: std::str::FromStr>(&self, what: &str) -> Result<Option<T>, ValueError> {
        self.text()
            .map(|s| {
                s.trim()
                    .parse::<T>()
                    .map_err(|_| ValueError(format!("'{s}' is not {what}")))
            })
            .transpose()
    }
}

impl<'de> IntoDeserializer<'de, ValueError> for Lenient {
    type Deserializer = Lenient;
    fn into_deserializer(self) -> Lenient {
        self
    }
}

macro_rules! integer {
    ($($method:ident: $t:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
            let out_of_range = |n: &dyn fmt::Display| {
                ValueError(format!("{n} is not a whole number from {} to {}", <$t>::MIN, <$t>::MAX))
            };
            match &self.0 {
                toml::Value::Integer(i) => {
                    visitor.$visit(<$t>::try_from(*i).map_err(|_| out_of_range(i))?)
                }
                toml::Value::String(s) => match s.trim().parse::<$t>() {
                    Ok(n) => visitor.$visit(n),
                    Err(_) => Err(out_of_range(&format!("'{s}'"))),
                },
                _ => self.deserialize_any(visitor),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Lenient {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.0 {
            toml::Value::String(s) => visitor.visit_string(s),
            toml::Value::Integer(i) => visitor.visit_i64(i),
            toml::Value::Float(f) => visitor.visit_f64(f),
            toml::Value::Boolean(b) => visitor.visit_bool(b),
            toml::Value::Datetime(d) => visitor.visit_string(d.to_string()),
            toml::Value::Array(a) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(a.into_iter().map(Lenient)))
            }
            toml::Value::Table(_) => Err(ValueError(
                "a value must be a string, a number or a boolean".into(),
            )),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.text() {
            Some(s) => visitor.visit_bool(crate::cli::parse_bool(s).map_err(ValueError)?),
            None => self.deserialize_any(visitor),
        }
    }

    integer! {
        deserialize_u8: u8 => visit_u8,
        deserialize_u16: u16 => visit_u16,
        deserialize_u32: u32 => visit_u32,
        deserialize_u64: u64 => visit_u64,
        deserialize_i8: i8 => visit_i8,
        deserialize_i16: i16 => visit_i16,
        deserialize_i32: i32 => visit_i32,
        deserialize_i64: i64 => visit_i64,
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.number::<f64>("a number")? {
            Some(x) => visitor.visit_f64(x),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_f64(visitor)
    }

    /// Text where text is wanted: a number or a switch as the command line would have it.
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match super::options::option_value(&self.0) {
            Some(s) => visitor.visit_string(s),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        visitor.visit_newtype_struct(self)
    }

    /// A repeatable option: a list, or one value.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.0 {
            toml::Value::Array(a) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(a.into_iter().map(Lenient)))
            }
            one => visitor.visit_seq(de::value::SeqDeserializer::new(std::iter::once(Lenient(
                one,
            )))),
        }
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char bytes byte_buf unit unit_struct tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().expect("a table")
    }

    /// A step's run options of the table `text`.
    fn run_args(text: &str) -> Result<RunArgs, String> {
        StepOptions {
            table: table(text),
            ..Default::default()
        }
        .run_args()
    }

    #[test]
    fn a_plans_table_reads_into_typed_run_options_with_the_command_lines_defaults() {
        let a = run_args(
            "rows_per_commit = 50\nrand-type = \"pareto\"\nskip_trx = \"on\"\nrate = \"12.5\"\nscript = \"x.sql@2\"\nwarmup_time = 3\nevents = \"7\"\n",
        )
        .expect("options");
        assert_eq!(a.families.ibench.rows_per_commit, 50);
        assert_eq!(a.rand_type, crate::workload::rand::RandType::Pareto);
        assert!(a.families.sysbench.skip_trx);
        assert_eq!(a.rate, 12.5);
        assert_eq!(a.families.pgbench.scripts, vec!["x.sql@2".to_string()]);
        assert_eq!(a.warmup, 3.0);
        assert_eq!(a.events, 7);
        // Everything else as the command line leaves it.
        let d = RunArgs::default();
        assert_eq!(
            (a.table_size, a.families.sysbench.range_size),
            (d.table_size, d.families.sysbench.range_size)
        );
    }

    #[test]
    fn a_wrong_name_or_value_is_named() {
        let e = run_args("no_such = 1\n").unwrap_err();
        assert!(
            e.starts_with("option no_such: dbsweep run has no such option"),
            "{e}"
        );
        let e = run_args("rows-per-commit = \"many\"\n").unwrap_err();
        assert_eq!(
            e,
            "option rows-per-commit: 'many' is not a whole number from 0 to 4294967295"
        );
        let e = read::<RunArgs>(&table("rand_type = \"zipf\"\n")).unwrap_err();
        assert!(
            e.starts_with("option rand_type: 'zipf' is not one of uniform"),
            "{e}"
        );
        let e = read::<RunArgs>(&table("skip_trx = \"maybe\"\n")).unwrap_err();
        assert!(e.starts_with("option skip_trx: "), "{e}");
        let e = read::<RunArgs>(&table("events = -1\n")).unwrap_err();
        assert_eq!(
            e,
            "option events: -1 is not a whole number from 0 to 18446744073709551615"
        );
    }
}
