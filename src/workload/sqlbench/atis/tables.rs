//! test-ATIS's 28 tables as its `init_data` makes them, and their names in dbsweep.

/// The tables in the original's order: name, fields, keys (`init_data`'s `create` calls).
pub(super) const TABLES: [(&str, &[&str], &[&str]); 28] = [
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
pub(crate) const TABLE_NAMES: [&str; 28] = [
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
