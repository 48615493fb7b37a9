//! sql-bench's ATIS group, dbsweep's shorter stand-in still (not the original test-ATIS,
//! whose 28 tables come from sql-bench's `Data/ATIS` files): airports, airlines, flights and
//! fares generated, three kinds of query over them (`--scale N` multiplies the rows and the
//! repetitions).

use super::{Ctx, GROUPS, SqlBenchClient};
use crate::db::{DbError, Param};
use crate::workload::rand::Rand;

impl SqlBenchClient {
    pub(super) fn atis(&mut self, c: &mut Ctx, rand: &mut Rand, s: u64) -> Result<(), DbError> {
        const AIRPORTS: u64 = 50;
        const AIRLINES: u64 = 10;
        let flights = 5000 * s;
        c.sql("CREATE TABLE sqlbench_airport (code INT NOT NULL PRIMARY KEY, city VARCHAR(32) NOT NULL)")?;
        c.sql("CREATE TABLE sqlbench_airline (code INT NOT NULL PRIMARY KEY, name VARCHAR(32) NOT NULL)")?;
        c.sql(
            "CREATE TABLE sqlbench_flight (id INT NOT NULL PRIMARY KEY, from_airport INT NOT NULL, \
             to_airport INT NOT NULL, airline INT NOT NULL, departs INT NOT NULL, arrives INT NOT NULL)",
        )?;
        c.sql(
            "CREATE TABLE sqlbench_fare (flight INT NOT NULL, class INT NOT NULL, price INT NOT NULL, \
             PRIMARY KEY (flight, class))",
        )?;
        let ins = c.prepare("INSERT INTO sqlbench_airport VALUES (?, ?)")?;
        let city = |i: u64| format!("city{:02}", i % 40);
        let cities: Vec<String> = (0..AIRPORTS).map(city).collect();
        for (i, name) in cities.iter().enumerate() {
            c.write(ins, &[Param::Int(i as i64), Param::Text(name)])?;
        }
        let ins = c.prepare("INSERT INTO sqlbench_airline VALUES (?, ?)")?;
        for i in 0..AIRLINES as i64 {
            c.write(ins, &[Param::Int(i), Param::Text("airline")])?;
        }
        let ins = c.prepare("INSERT INTO sqlbench_flight VALUES (?, ?, ?, ?, ?, ?)")?;
        c.fill(ins, flights, |i, p| {
            let from = i * 17 % AIRPORTS;
            let to = (from + 1 + i % (AIRPORTS - 1)) % AIRPORTS;
            let departs = (i * 37 % 1440) as i64;
            p.extend([
                Param::Int(i as i64),
                Param::Int(from as i64),
                Param::Int(to as i64),
                Param::Int((i % AIRLINES) as i64),
                Param::Int(departs),
                Param::Int(departs + 60 + (i % 300) as i64),
            ]);
        })?;
        let ins = c.prepare("INSERT INTO sqlbench_fare VALUES (?, ?, ?)")?;
        c.fill(ins, flights * 3, |i, p| {
            p.extend([
                Param::Int((i / 3) as i64),
                Param::Int((i % 3) as i64),
                Param::Int((100 + i * 13 % 900) as i64),
            ]);
        })?;
        c.sql("CREATE INDEX sqlbench_flight_route ON sqlbench_flight (from_airport, to_airport)")?;
        self.lap(0);
        let two = c.prepare(
            "SELECT f.id, f.departs, f.arrives FROM sqlbench_flight f \
             JOIN sqlbench_airport a ON a.code = f.from_airport \
             JOIN sqlbench_airport b ON b.code = f.to_airport \
             WHERE a.city = ? AND b.city = ? ORDER BY f.departs",
        )?;
        let pick = |rand: &mut Rand| cities[rand.uniform(0, AIRPORTS - 1) as usize].as_str();
        for _ in 0..200 * s {
            let (a, b) = (pick(rand), pick(rand));
            c.read(two, &[Param::Text(a), Param::Text(b)])?;
        }
        self.lap(1);
        let cheapest = c.prepare(
            "SELECT f.id, MIN(p.price) FROM sqlbench_flight f \
             JOIN sqlbench_fare p ON p.flight = f.id \
             JOIN sqlbench_airport a ON a.code = f.from_airport \
             WHERE a.city = ? GROUP BY f.id ORDER BY 2 LIMIT 10",
        )?;
        for _ in 0..50 * s {
            let a = pick(rand);
            c.read(cheapest, &[Param::Text(a)])?;
        }
        self.lap(2);
        let per_airline = c.prepare(
            "SELECT l.name, COUNT(*) FROM sqlbench_flight f JOIN sqlbench_airline l \
             ON l.code = f.airline GROUP BY l.code, l.name",
        )?;
        for _ in 0..20 {
            c.read(per_airline, &[])?;
        }
        for t in GROUPS[8].2 {
            c.sql(&format!("DROP TABLE {t}"))?;
        }
        self.lap(3);
        Ok(())
    }
}
