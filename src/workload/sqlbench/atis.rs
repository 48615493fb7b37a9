//! sql-bench's test-ATIS (MariaDB's `sql-bench/test-ATIS.sh`): the 28 tables of the ATIS
//! airline database made as server-cfg makes them, loaded a row a statement from the
//! original's `Data/ATIS/TABLE.txt` files (real airline data, which no rule generates: they are
//! read from the user's sql-bench checkout, `--sqlbench-data DIR` or `SQLBENCH_HOME`), then the
//! five groups of selects, each group's queries run in turn 5,000 times (500 with
//! `--small-test`), the row counts of the hundredth round checked against the original's, and
//! the tables dropped. A query the server cannot run by server-cfg's limits is left out as the
//! original leaves it out.

use std::path::{Path, PathBuf};

use super::{Ctx, SqlBenchClient};
use crate::db::{DbError, Dialect};

/// The tables in the original's order: name, fields, keys (`init_data`'s `create` calls).
const TABLES: [(&str, &[&str], &[&str]); 28] = [
    (
        "aircraft",
        &[
            "aircraft_code char(3) NOT NULL",
            "aircraft_type char(64) NOT NULL",
            "engines tinyint(1) NOT NULL",
            "category char(10) NOT NULL",
            "wide_body char(3) NOT NULL",
            "wing_span float(6,2) NOT NULL",
            "length1 float(6,2) NOT NULL",
            "weight integer(7) NOT NULL",
            "capacity smallint(3) NOT NULL",
            "pay_load integer(7) NOT NULL",
            "cruising_speed mediumint(5) NOT NULL",
            "range_miles mediumint(5) NOT NULL",
            "pressurized char(3) NOT NULL",
        ],
        &["PRIMARY KEY (aircraft_code)"],
    ),
    (
        "airline",
        &[
            "airline_code char(2) NOT NULL",
            "airline_name char(64) NOT NULL",
            "notes char(38) NOT NULL",
        ],
        &["PRIMARY KEY (airline_code)"],
    ),
    (
        "airport",
        &[
            "airport_code char(3) NOT NULL",
            "airport_name char(40) NOT NULL",
            "location char(36) NOT NULL",
            "state_code char(2) NOT NULL",
            "country_name char(25) NOT NULL",
            "time_zone_code char(3) NOT NULL",
        ],
        &["PRIMARY KEY (airport_code)"],
    ),
    (
        "airport_service",
        &[
            "city_code char(4) NOT NULL",
            "airport_code char(3) NOT NULL",
            "miles_distant float(4,1) NOT NULL",
            "direction char(3) NOT NULL",
            "minutes_distant smallint(3) NOT NULL",
        ],
        &["PRIMARY KEY (city_code, airport_code)"],
    ),
    (
        "city",
        &[
            "city_code char(4) NOT NULL",
            "city_name char(25) NOT NULL",
            "state_code char(2) NOT NULL",
            "country_name char(25) NOT NULL",
            "time_zone_code char(3) NOT NULL",
        ],
        &["PRIMARY KEY (city_code)"],
    ),
    (
        "class_of_service",
        &[
            "class_code char(2) NOT NULL",
            "`rank` tinyint(2) NOT NULL",
            "class_description char(80) NOT NULL",
        ],
        &["PRIMARY KEY (class_code)"],
    ),
    (
        "code_description",
        &["code char(5) NOT NULL", "description char(110) NOT NULL"],
        &["PRIMARY KEY (code)"],
    ),
    (
        "compound_class",
        &[
            "fare_class char(3) NOT NULL",
            "base_class char(2) NOT NULL",
            "class_type char(10) NOT NULL",
            "premium char(3) NOT NULL",
            "economy char(3) NOT NULL",
            "discounted char(3) NOT NULL",
            "night char(3) NOT NULL",
            "season_fare char(4) NOT NULL",
            "class_days char(7) NOT NULL",
        ],
        &["PRIMARY KEY (fare_class)"],
    ),
    (
        "connect_leg",
        &[
            "connect_code integer(8) NOT NULL",
            "leg_number tinyint(1) NOT NULL",
            "flight_code integer(8) NOT NULL",
        ],
        &["PRIMARY KEY (connect_code, leg_number, flight_code)"],
    ),
    (
        "fconnection",
        &[
            "connect_code integer(8) NOT NULL",
            "from_airport char(3) NOT NULL",
            "to_airport char(3) NOT NULL",
            "departure_time smallint(4) NOT NULL",
            "arrival_time smallint(4) NOT NULL",
            "flight_days char(7) NOT NULL",
            "stops tinyint(1) NOT NULL",
            "connections tinyint(1) NOT NULL",
            "time_elapsed smallint(4) NOT NULL",
        ],
        &[
            "PRIMARY KEY (connect_code)",
            "INDEX from_airport1 (from_airport)",
            "INDEX to_airport1 (to_airport)",
        ],
    ),
    (
        "day_name",
        &["day_code tinyint(1) NOT NULL", "day_name char(9) NOT NULL"],
        &["PRIMARY KEY (day_code)"],
    ),
    (
        "dual_carrier",
        &[
            "main_airline char(2) NOT NULL",
            "dual_airline char(2) NOT NULL",
            "low_flight smallint(4) NOT NULL",
            "high_flight smallint(4) NOT NULL",
            "fconnection_name char(64) NOT NULL",
        ],
        &[
            "PRIMARY KEY (main_airline, dual_airline, low_flight)",
            "INDEX main_airline1 (main_airline)",
        ],
    ),
    (
        "fare",
        &[
            "fare_code char(8) NOT NULL",
            "from_airport char(3) NOT NULL",
            "to_airport char(3) NOT NULL",
            "fare_class char(3) NOT NULL",
            "fare_airline char(2) NOT NULL",
            "restrict_code char(5) NOT NULL",
            "one_way_cost float(7,2) NOT NULL",
            "rnd_trip_cost float(8,2) NOT NULL",
        ],
        &[
            "PRIMARY KEY (fare_code)",
            "INDEX from_airport2 (from_airport)",
            "INDEX to_airport2 (to_airport)",
        ],
    ),
    (
        "flight",
        &[
            "flight_code integer(8) NOT NULL",
            "flight_days char(7) NOT NULL",
            "from_airport char(3) NOT NULL",
            "to_airport char(3) NOT NULL",
            "departure_time smallint(4) NOT NULL",
            "arrival_time smallint(4) NOT NULL",
            "airline_code char(2) NOT NULL",
            "flight_number smallint(4) NOT NULL",
            "class_string char(8) NOT NULL",
            "aircraft_code char(3) NOT NULL",
            "meal_code char(7) NOT NULL",
            "stops tinyint(1) NOT NULL",
            "dual_carrier char(1) NOT NULL",
            "time_elapsed smallint(4) NOT NULL",
        ],
        &[
            "PRIMARY KEY (flight_code)",
            "INDEX from_airport3 (from_airport)",
            "INDEX to_airport3 (to_airport)",
        ],
    ),
    (
        "flight_class",
        &[
            "flight_code integer(8) NOT NULL",
            "fare_class char(3) NOT NULL",
        ],
        &["PRIMARY KEY (flight_code, fare_class)"],
    ),
    (
        "flight_day",
        &[
            "day_mask char(7) NOT NULL",
            "day_code tinyint(1) NOT NULL",
            "day_name char(9) NOT NULL",
        ],
        &["PRIMARY KEY (day_mask, day_code)"],
    ),
    (
        "flight_fare",
        &[
            "flight_code integer(8) NOT NULL",
            "fare_code char(8) NOT NULL",
        ],
        &["PRIMARY KEY (flight_code, fare_code)"],
    ),
    (
        "food_service",
        &[
            "meal_code char(4) NOT NULL",
            "meal_number tinyint(1) NOT NULL",
            "meal_class char(10) NOT NULL",
            "meal_description char(10) NOT NULL",
        ],
        &["PRIMARY KEY (meal_code, meal_number, meal_class)"],
    ),
    (
        "ground_service",
        &[
            "city_code char(4) NOT NULL",
            "airport_code char(3) NOT NULL",
            "transport_code char(1) NOT NULL",
            "ground_fare float(6,2) NOT NULL",
        ],
        &["PRIMARY KEY (city_code, airport_code, transport_code)"],
    ),
    (
        "time_interval",
        &[
            "period char(20) NOT NULL",
            "begin_time smallint(4) NOT NULL",
            "end_time smallint(4) NOT NULL",
        ],
        &["PRIMARY KEY (period, begin_time)"],
    ),
    (
        "month_name",
        &[
            "month_number tinyint(2) NOT NULL",
            "month_name char(9) NOT NULL",
        ],
        &["PRIMARY KEY (month_number)"],
    ),
    (
        "restrict_carrier",
        &[
            "restrict_code char(5) NOT NULL",
            "airline_code char(2) NOT NULL",
        ],
        &["PRIMARY KEY (restrict_code, airline_code)"],
    ),
    (
        "restrict_class",
        &[
            "restrict_code char(5) NOT NULL",
            "ex_fare_class char(12) NOT NULL",
        ],
        &["PRIMARY KEY (restrict_code, ex_fare_class)"],
    ),
    (
        "restriction",
        &[
            "restrict_code char(5) NOT NULL",
            "application char(80) NOT NULL",
            "no_discounts char(80) NOT NULL",
            "reserve_ticket smallint(3) NOT NULL",
            "stopovers char(1) NOT NULL",
            "return_min smallint(3) NOT NULL",
            "return_max smallint(3) NOT NULL",
        ],
        &["PRIMARY KEY (restrict_code)"],
    ),
    (
        "state",
        &[
            "state_code char(2) NOT NULL",
            "state_name char(25) NOT NULL",
            "country_name char(25) NOT NULL",
        ],
        &["PRIMARY KEY (state_code)"],
    ),
    (
        "stop1",
        &[
            "flight_code integer(8) NOT NULL",
            "stop_number tinyint(1) NOT NULL",
            "stop_flight integer(8) NOT NULL",
        ],
        &["PRIMARY KEY (flight_code, stop_number)"],
    ),
    (
        "time_zone",
        &[
            "time_zone_code char(3) NOT NULL",
            "time_zone_name char(32) NOT NULL",
        ],
        &["PRIMARY KEY (time_zone_code, time_zone_name)"],
    ),
    (
        "transport",
        &[
            "transport_code char(1) NOT NULL",
            "transport_desc char(32) NOT NULL",
        ],
        &["PRIMARY KEY (transport_code)"],
    ),
];

/// The tables as dbsweep names them (`sqlbench_` and the original's name), for the group's
/// list of what it makes.
pub(super) const TABLE_NAMES: [&str; 28] = [
    "sqlbench_aircraft",
    "sqlbench_airline",
    "sqlbench_airport",
    "sqlbench_airport_service",
    "sqlbench_city",
    "sqlbench_class_of_service",
    "sqlbench_code_description",
    "sqlbench_compound_class",
    "sqlbench_connect_leg",
    "sqlbench_fconnection",
    "sqlbench_day_name",
    "sqlbench_dual_carrier",
    "sqlbench_fare",
    "sqlbench_flight",
    "sqlbench_flight_class",
    "sqlbench_flight_day",
    "sqlbench_flight_fare",
    "sqlbench_food_service",
    "sqlbench_ground_service",
    "sqlbench_time_interval",
    "sqlbench_month_name",
    "sqlbench_restrict_carrier",
    "sqlbench_restrict_class",
    "sqlbench_restriction",
    "sqlbench_state",
    "sqlbench_stop1",
    "sqlbench_time_zone",
    "sqlbench_transport",
];

/// The tests, as the original's output names them.
pub(super) const TESTS: [&str; 8] = [
    "create_table",
    "insert",
    "select_simple_join",
    "select_join",
    "select_key_prefix_join",
    "select_distinct",
    "select_group",
    "drop_table",
];

/// What server-cfg must say a server can do for a query to run (`$limits->{...}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Needs {
    Nothing,
    GroupFunctions,
    /// `group_func_sql_min_str`: MIN() and MAX() of strings.
    MinOfStrings,
    /// `if`: a key no server's configuration sets (MySQL's is `func_extra_if`), so the
    /// original never runs the query it guards.
    If,
    /// `group_func_extra_std`: std().
    Std,
    /// `having_with_alias`: a select list's alias in HAVING.
    HavingAlias,
    /// `having_with_group`: a group function in HAVING.
    HavingGroup,
    /// `func_odbc_mod` and `func_odbc_floor`.
    ModFloor,
    /// The same, with MOD() of FLOOR()'s value: PostgreSQL has no mod(double precision,
    /// integer) (FLOOR of a division there is a double), so that the original stops there with
    /// its error; dbsweep leaves the query out as a limit would.
    ModOfFloor,
    /// `like_with_column`: `column1 LIKE column2`.
    LikeColumn,
}

impl Needs {
    /// Whether a server of dialect `d` can, by server-cfg's `db_MySQL` and `db_Pg` limits;
    /// SQLite, which server-cfg never knew, by what its build has (no std(), floor() or mod()).
    fn met(self, d: Dialect) -> bool {
        match self {
            Needs::If => false,
            Needs::Std => d == Dialect::Mysql,
            Needs::HavingAlias => d != Dialect::Postgres,
            Needs::ModFloor => matches!(d, Dialect::Mysql | Dialect::Postgres),
            Needs::ModOfFloor => d == Dialect::Mysql,
            Needs::Nothing
            | Needs::GroupFunctions
            | Needs::MinOfStrings
            | Needs::HavingGroup
            | Needs::LikeColumn => true,
        }
    }
}

/// The query groups (`@Q1`, `@Q2`, `@Q21`, `@Q3`, `@Q4`): each query with the rows the
/// original's data gives and what it needs.
type Query = (&'static str, u64, Needs);
const QUERIES: [&[Query]; 5] = [
    &[
        (
            "select city.city_name,state.state_name,city.city_code from city,state where city.city_code='MATL' and city.state_code=state.state_code",
            1,
            Needs::Nothing,
        ),
        (
            "select city.city_name,state.state_name,city.city_code from state,city where city.state_code=state.state_code",
            11,
            Needs::Nothing,
        ),
        (
            "select month_name.month_name,day_name.day_name from month_name,day_name where month_name.month_number=day_name.day_code",
            7,
            Needs::Nothing,
        ),
        (
            "select month_name.month_name,day_name.day_name from month_name,day_name where month_name.month_number=day_name.day_code and day_name.day_code >= 4",
            4,
            Needs::Nothing,
        ),
        (
            "select flight.flight_code,aircraft.aircraft_type from flight,aircraft where flight.aircraft_code=aircraft.aircraft_code",
            579,
            Needs::Nothing,
        ),
    ],
    &[(
        "select airline.airline_name,aircraft.aircraft_type from aircraft,airline,flight where flight.aircraft_code=aircraft.aircraft_code and flight.airline_code=airline.airline_code",
        579,
        Needs::Nothing,
    )],
    &[(
        "select fare.fare_code from restrict_carrier,airline,fare where restrict_carrier.airline_code=airline.airline_code and fare.restrict_code=restrict_carrier.restrict_code",
        5692,
        Needs::Nothing,
    )],
    &[
        ("select distinct category from aircraft", 6, Needs::Nothing),
        (
            "select distinct from_airport from flight",
            9,
            Needs::Nothing,
        ),
        (
            "select distinct aircraft_code from flight",
            22,
            Needs::Nothing,
        ),
        ("select distinct * from fare", 534, Needs::Nothing),
        (
            "select distinct flight_code from flight_fare",
            579,
            Needs::Nothing,
        ),
        (
            "select distinct flight.flight_code,aircraft.aircraft_type from flight,aircraft where flight.aircraft_code=aircraft.aircraft_code",
            579,
            Needs::Nothing,
        ),
        // join_optimizer: every server dbsweep drives has it.
        (
            "select distinct airline.airline_name,aircraft.aircraft_type from aircraft,airline,flight where flight.aircraft_code=aircraft.aircraft_code and flight.airline_code=airline.airline_code",
            44,
            Needs::Nothing,
        ),
        (
            "select distinct airline.airline_name,aircraft.aircraft_type from flight,aircraft,airline where flight.aircraft_code=aircraft.aircraft_code and flight.airline_code=airline.airline_code",
            44,
            Needs::Nothing,
        ),
    ],
    &[
        (
            "select day_name.day_name,day_name.day_code,count(*) from flight_day,day_name where day_name.day_code=flight_day.day_code group by day_name.day_name,day_name.day_code order by day_name.day_code",
            7,
            Needs::GroupFunctions,
        ),
        (
            "select day_name.day_name,count(*) from flight_day,day_name where day_name.day_code=flight_day.day_code group by day_name.day_name",
            7,
            Needs::GroupFunctions,
        ),
        (
            "select month_name,day_name from month_name,day_name where month_number=day_code and day_code>3 group by month_name,day_name",
            4,
            Needs::GroupFunctions,
        ),
        (
            "select day_name.day_name,flight_day.day_code,count(*) from flight_day,day_name where day_name.day_code=flight_day.day_code group by flight_day.day_code,day_name.day_name order by flight_day.day_code",
            7,
            Needs::GroupFunctions,
        ),
        (
            "select sum(engines) from aircraft",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select avg(engines) from aircraft",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select avg(engines) from aircraft where engines>0",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select count(*),min(pay_load),max(pay_load) from aircraft where pay_load>0",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select min(flight_code),min(flight_code) from flight",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select min(from_airport),min(to_airport) from flight",
            1,
            Needs::MinOfStrings,
        ),
        (
            "select count(*) from aircraft where pay_load>10000",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select count(*) from aircraft where pay_load<>0",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select count(*) from flight where flight_code >= 112793",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select count(if(pay_load,1,NULL)) from aircraft",
            1,
            Needs::If,
        ),
        ("select std(engines) from aircraft", 1, Needs::Std),
        (
            "SELECT from_airport,to_airport,avg(time_elapsed) FROM flight WHERE from_airport='ATL' AND to_airport='BOS' group by from_airport,to_airport",
            1,
            Needs::GroupFunctions,
        ),
        (
            "select city_code, avg(ground_fare) from ground_service where ground_fare<>0 group by city_code",
            11,
            Needs::GroupFunctions,
        ),
        (
            "select count(*), ground_service.city_code from ground_service group by ground_service.city_code",
            12,
            Needs::GroupFunctions,
        ),
        (
            "select category,count(*) as totalnr from aircraft where engines=2 group by category having totalnr>4",
            3,
            Needs::HavingAlias,
        ),
        (
            "select category,count(*) from aircraft where engines=2 group by category having count(*)>4",
            3,
            Needs::HavingGroup,
        ),
        (
            "select flight_number,range_miles,fare_class FROM aircraft,flight,flight_class WHERE flight.flight_code=flight_class.flight_code AND flight.aircraft_code=aircraft.aircraft_code AND range_miles<>0 AND (stops=1 OR stops=2) GROUP BY flight_number,range_miles,fare_class",
            150,
            Needs::GroupFunctions,
        ),
        (
            "select distinct from_airport.time_zone_code,to_airport.time_zone_code,(FLOOR(arrival_time/100)*60+MOD(arrival_time,100)-FLOOR(departure_time/100)*60-MOD(departure_time,100)-time_elapsed)/60 AS time_zone_diff FROM flight,airport AS from_airport,airport AS to_airport WHERE flight.from_airport=from_airport.airport_code AND flight.to_airport=to_airport.airport_code GROUP BY from_airport.time_zone_code,to_airport.time_zone_code,arrival_time,departure_time,time_elapsed",
            21,
            Needs::ModFloor,
        ),
        (
            "select DISTINCT from_airport.time_zone_code,to_airport.time_zone_code,MOD((FLOOR(arrival_time/100)*60+MOD(arrival_time,100)-FLOOR(departure_time/100)*60-MOD(departure_time,100)-time_elapsed)/60+36,24)-12 AS time_zone_diff FROM flight,airport AS from_airport,airport AS to_airport WHERE flight.from_airport=from_airport.airport_code AND flight.to_airport=to_airport.airport_code and MOD((FLOOR(arrival_time/100)*60+MOD(arrival_time,100)-FLOOR(departure_time/100)*60-MOD(departure_time,100)-time_elapsed)/60+36,24)-12 < 10",
            14,
            Needs::ModOfFloor,
        ),
        (
            "select from_airport,to_airport,range_miles,time_elapsed FROM aircraft,flight WHERE aircraft.aircraft_code=flight.aircraft_code AND to_airport NOT LIKE from_airport AND range_miles<>0 AND time_elapsed<>0 GROUP BY from_airport,to_airport,range_miles,time_elapsed",
            409,
            Needs::LikeColumn,
        ),
        (
            "SELECT airport.country_name,state.state_name,city.city_name,airport_service.direction FROM airport_service,state,airport,city WHERE airport_service.city_code=city.city_code AND airport_service.airport_code=airport.airport_code AND state.state_code=airport.state_code AND state.state_code=city.state_code AND airport.state_code=city.state_code AND airport.country_name=city.country_name AND airport.country_name=state.country_name AND city.time_zone_code=airport.time_zone_code GROUP BY airport.country_name,state.state_name,city.city_name,airport_service.direction ORDER BY state_name",
            11,
            Needs::GroupFunctions,
        ),
        (
            "SELECT airport.country_name,state.state_name,city.city_name,airport_service.direction FROM airport_service,state,airport,city WHERE airport_service.city_code=city.city_code AND airport_service.airport_code=airport.airport_code AND state.state_code=airport.state_code AND state.state_code=city.state_code AND airport.state_code=city.state_code AND airport.country_name=city.country_name AND airport.country_name=state.country_name AND city.time_zone_code=airport.time_zone_code GROUP BY airport.country_name,state.state_name,city.city_name,airport_service.direction ORDER BY state_name DESC",
            11,
            Needs::GroupFunctions,
        ),
        (
            "SELECT airport.country_name,state.state_name,city.city_name,airport_service.direction FROM airport_service,state,airport,city WHERE airport_service.city_code=city.city_code AND airport_service.airport_code=airport.airport_code AND state.state_code=airport.state_code AND state.state_code=city.state_code AND airport.state_code=city.state_code AND airport.country_name=city.country_name AND airport.country_name=state.country_name AND city.time_zone_code=airport.time_zone_code GROUP BY airport.country_name,state.state_name,city.city_name,airport_service.direction ORDER BY state_name",
            11,
            Needs::GroupFunctions,
        ),
        (
            "SELECT from_airport,to_airport,fare.fare_class,night,one_way_cost,rnd_trip_cost,class_days FROM compound_class,fare WHERE compound_class.fare_class=fare.fare_class AND one_way_cost <= 825 AND one_way_cost >= 280 AND from_airport='SFO' AND to_airport='DFW' GROUP BY from_airport,to_airport,fare.fare_class,night,one_way_cost,rnd_trip_cost,class_days ORDER BY one_way_cost",
            10,
            Needs::GroupFunctions,
        ),
        (
            "select engines,category,cruising_speed,from_airport,to_airport FROM aircraft,flight WHERE category='JET' AND engines >= 1 AND aircraft.aircraft_code=flight.aircraft_code AND to_airport NOT LIKE from_airport AND stops>0 GROUP BY engines,category,cruising_speed,from_airport,to_airport ORDER BY engines DESC",
            29,
            Needs::LikeColumn,
        ),
    ],
];

/// The round whose row counts are checked (`$i == 100`).
const CHECKED_ROUND: u64 = 100;

/// Rounds of each query group: 5,000, or 500 with --small-test.
pub(super) fn rounds(small: bool) -> u64 {
    if small { 500 } else { 5_000 }
}

/// The queries of group `g` that a server of dialect `d` runs, their tables named as dbsweep
/// names them, with the rows each gives on the original's data.
pub(super) fn queries(d: Dialect, g: usize) -> Vec<(String, u64)> {
    QUERIES[g]
        .iter()
        .filter(|q| q.2.met(d))
        .map(|q| (own_tables(q.0), q.1))
        .collect()
}

/// `sql` with each table of its FROM list named as dbsweep names it and called by the
/// original's name (`from city,state` -> `from sqlbench_city city,sqlbench_state state`;
/// `airport AS from_airport` -> `sqlbench_airport AS from_airport`): the rest of the query,
/// which names columns by their tables, is the original's to the byte.
fn own_tables(sql: &str) -> String {
    let lower = sql.to_ascii_lowercase();
    let Some(from) = lower.find(" from ").map(|at| at + " from ".len()) else {
        return sql.to_string();
    };
    let end = [" where ", " group by ", " order by "]
        .iter()
        .filter_map(|w| lower[from..].find(w).map(|at| from + at))
        .min()
        .unwrap_or(sql.len());
    let list: Vec<String> = sql[from..end]
        .split(',')
        .map(|item| {
            let item = item.trim();
            match item.split_once(" AS ").or_else(|| item.split_once(" as ")) {
                Some((table, alias)) => format!("sqlbench_{table} AS {alias}"),
                None => format!("sqlbench_{item} {item}"),
            }
        })
        .collect();
    format!("{}{}{}", &sql[..from], list.join(","), &sql[end..])
}

/// The rows of each table, in the tables' order, each line a list of values checked to be
/// only that (and with the original's `\'` -> `''`, as its `double_quotes` servers get it).
pub(super) struct Data {
    rows: Vec<Vec<String>>,
}

/// Reads the ATIS files of the sql-bench checkout `dir` (`Data/ATIS/TABLE.txt`; the older
/// checkouts' `connection.txt` and `stop.txt` where a table's own file is not there).
pub(super) fn data(dir: Option<&Path>) -> Result<Data, String> {
    let Some(dir) = dir else {
        return Err(
            "sqlbench_atis: needs the original's Data/ATIS files (real airline data, which no \
             rule generates): --sqlbench-data DIR (or SQLBENCH_HOME) naming a sql-bench checkout"
                .into(),
        );
    };
    let mut rows = Vec::with_capacity(TABLES.len());
    for (name, fields, _) in TABLES {
        let atis = dir.join("Data/ATIS");
        let mut path: PathBuf = atis.join(format!("{name}.txt"));
        let older = match name {
            "fconnection" => Some("connection.txt"),
            "stop1" => Some("stop.txt"),
            _ => None,
        };
        if let Some(older) = older
            && !path.exists()
        {
            path = atis.join(older);
        }
        // Only a regular file, and a bounded one (a FIFO or a device ends in an error at once).
        let text = crate::input::read_text(&path, crate::input::SMALL)
            .map_err(|e| format!("sqlbench_atis: {}: {e}", path.display()))?;
        let mut table = Vec::new();
        // The original skips lines without a word character.
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.chars().any(|c| c.is_alphanumeric() || c == '_'))
        {
            let sent = line.replace("\\'", "''");
            match values(&sent) {
                Some(n) if n == fields.len() => table.push(sent),
                found => {
                    return Err(format!(
                        "sqlbench_atis: {}:{}: not a row of {name}'s {} values{}",
                        path.display(),
                        i + 1,
                        fields.len(),
                        found.map_or(String::new(), |n| format!(" ({n} found)"))
                    ));
                }
            }
        }
        rows.push(table);
    }
    Ok(Data { rows })
}

/// How many values `line` lists (`'text'` or a number, separated by commas), or None when it
/// is anything else. A quote inside a string is doubled; a backslash may escape any other
/// character, never a quote or another backslash: so every server reads the same strings
/// (MySQL's backslash escapes and the standard strings of PostgreSQL and SQLite alike), and a
/// line can never end its statement and start another.
fn values(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let mut n = 0;
    loop {
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        match b.get(i)? {
            b'\'' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
                        b'\'' => break,
                        b'\\' if matches!(b.get(i + 1), Some(b'\'' | b'\\') | None) => {
                            return None;
                        }
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            _ => {
                let start = i;
                if matches!(b[i], b'-' | b'+') {
                    i += 1;
                }
                let digits = i;
                while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                    i += 1;
                }
                let number = &line[digits..i];
                if number.is_empty()
                    || !number.bytes().any(|c| c.is_ascii_digit())
                    || number.matches('.').count() > 1
                    || i == start
                {
                    return None;
                }
            }
        }
        n += 1;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        match b.get(i) {
            None => return Some(n),
            Some(b',') => i += 1,
            Some(_) => return None,
        }
    }
}

impl SqlBenchClient {
    /// The ATIS script: its tables, its rows, its five query groups, the drop.
    pub(super) fn atis_original(&mut self, c: &mut Ctx, data: &Data) -> Result<(), DbError> {
        let d = self.dialect;
        for (name, fields, keys) in TABLES {
            // PostgreSQL has no backquotes; `rank` needs none there (MariaDB's script quotes
            // it for the servers where it became a reserved word).
            let fields: Vec<String> = fields
                .iter()
                .map(|f| match d {
                    Dialect::Postgres => f.replace('`', ""),
                    _ => f.to_string(),
                })
                .collect();
            let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            c.create(d, &format!("sqlbench_{name}"), &fields, &keys)?;
        }
        self.lap(0);
        for ((name, ..), rows) in TABLES.iter().zip(&data.rows) {
            for row in rows {
                c.text_write(&format!("insert into sqlbench_{name} values ({row})"))?;
            }
        }
        self.lap(1);
        for g in 0..QUERIES.len() {
            let queries = queries(d, g);
            for round in 1..=rounds(self.small) {
                for (sql, rows) in &queries {
                    let got = c.text_read(sql)?;
                    if round == CHECKED_ROUND && got != *rows {
                        self.warnings.push(format!(
                            "sqlbench_atis: {}: query '{sql}' returned {got} rows where the \
                             original's data gives {rows}",
                            TESTS[2 + g]
                        ));
                    }
                }
            }
            self.lap(2 + g);
        }
        for (name, ..) in TABLES {
            c.sql(&format!("drop table sqlbench_{name}"))?;
        }
        self.lap(7);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_from_lists_name_dbsweeps_tables_by_the_originals_names() {
        assert_eq!(
            own_tables(QUERIES[0][0].0),
            "select city.city_name,state.state_name,city.city_code from sqlbench_city city,sqlbench_state state where city.city_code='MATL' and city.state_code=state.state_code"
        );
        assert_eq!(
            own_tables("select distinct from_airport from flight"),
            "select distinct from_airport from sqlbench_flight flight"
        );
        let q = own_tables(QUERIES[4][21].0);
        assert!(
            q.contains(
                " FROM sqlbench_flight flight,sqlbench_airport AS from_airport,sqlbench_airport AS to_airport WHERE "
            ),
            "{q}"
        );
        // Every table a query names is one the group makes.
        for group in QUERIES {
            for (sql, ..) in group {
                let own = own_tables(sql);
                for word in own.split([' ', ',']) {
                    if let Some(t) = word.strip_prefix("sqlbench_") {
                        assert!(TABLES.iter().any(|(n, ..)| *n == t), "{t} in {own}");
                    }
                }
                assert!(own.contains("sqlbench_"), "{own}");
            }
        }
        assert_eq!(
            TABLE_NAMES.to_vec(),
            TABLES
                .iter()
                .map(|(n, ..)| format!("sqlbench_{n}"))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_limits_leave_out_what_server_cfg_leaves_out() {
        let counts = |d| (0..5).map(|g| queries(d, g).len()).collect::<Vec<_>>();
        // count(if(...)) never runs; PostgreSQL has no std(), no alias in HAVING and no
        // mod(double precision, integer); SQLite's build has no std(), floor() or mod().
        assert_eq!(counts(Dialect::Mysql), [5, 1, 1, 8, 28]);
        assert_eq!(counts(Dialect::Postgres), [5, 1, 1, 8, 25]);
        assert_eq!(counts(Dialect::Sqlite), [5, 1, 1, 8, 25]);
    }

    #[test]
    fn a_row_is_values_and_nothing_else() {
        assert_eq!(
            values("'ATR','AEROSPATIALE',2,'TURBOPROP',80.58,-3"),
            Some(6)
        );
        assert_eq!(values("'CHILDREN''S FARES','',7"), Some(3));
        assert_eq!(values("'CHILDREN\\S FARES',1"), Some(2));
        for bad in [
            "'a',1); drop table x; --",
            "'a\\'',1",
            "'a\\\\',1",
            "'open",
            "1,,2",
            "1.2.3",
            "now()",
            "'a' 'b'",
            "",
        ] {
            assert_eq!(values(bad), None, "{bad}");
        }
    }
}
