create schema raw;
create table raw.orders (id integer not null, status text);
