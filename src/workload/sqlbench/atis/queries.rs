//! test-ATIS's five query groups with the row counts the original's data gives, and what
//! server-cfg must say a server can do for each to run.

use crate::db::Dialect;

/// What server-cfg must say a server can do for a query to run (`$limits->{...}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Needs {
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
    pub(super) fn met(self, d: Dialect) -> bool {
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
pub(super) type Query = (&'static str, u64, Needs);
pub(super) const QUERIES: [&[Query]; 5] = [
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
