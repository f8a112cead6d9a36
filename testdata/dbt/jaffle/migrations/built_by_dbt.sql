-- What dbt builds from the nodes that sqb declares as sources rather than models: the seed's
-- table, the snapshot's and the Python model's. tests/import_dbt.rs runs this after raw.sql,
-- then builds every imported model from its SQL.
create schema analytics;
create schema snapshots;

create table analytics.country_codes (code text, name text);
insert into analytics.country_codes values ('DE', 'Germany'), ('FR', 'France');

create table snapshots.orders_snapshot as
select *, ordered_at as dbt_valid_from, cast(null as timestamp) as dbt_valid_to from raw.orders;

create table analytics.order_forecast (order_id integer, amount numeric(38, 3));
