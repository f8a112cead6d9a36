-- Defects planted in the warehouse `dbt build` makes of the jaffle project (target/jaffle.duckdb):
-- scripts/dbt-fixture runs `dbt test` on it after this file, and tests/audit_dbt.rs runs
-- `sqb audit` of the imported project on a copy after the same file. Each audit's failing count
-- must equal the failures dbt reported (target/test_results.json).

-- A duplicate key, twice over (raw.customers feeds the stg_customers view).
insert into raw.customers select * from raw.customers where id = 1;
insert into raw.customers select * from raw.customers where id = 2;
-- An order of a customer that does not exist, with a status nobody accepts, and another
-- unknown status (raw.orders feeds the stg_orders view).
insert into raw.orders values (90, 999, 'lost', timestamp '2026-02-10 10:00:00', 100);
insert into raw.orders values (91, 2, 'stolen', timestamp '2026-02-11 10:00:00', 200);
-- The tables dbt built (their enforced contracts keep primary keys): customers whose first
-- order has no count, one the `where` of the test leaves out, and an order of a customer the
-- dimension does not hold.
insert into analytics.dim_customers values
    (3, 'Grace Hopper', 'grace@example.com', timestamp '2026-02-05 08:00:00', null, false),
    (4, 'Edsger Dijkstra', 'edsger@example.com', timestamp '2026-02-06 08:00:00', null, false),
    (5, 'Barbara Liskov', 'barbara@example.com', null, null, false);
insert into analytics.fct_orders values
    (95, 777, 'placed', timestamp '2026-02-12 10:00:00', date '2026-02-12', 5.000, null);
