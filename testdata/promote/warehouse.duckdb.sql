-- DuckDB's share of the Postgres fixture: a sequence-fed key, a CHECK, a foreign key, a view.
-- DuckDB publishes every table by a copy in place, `film` too.
CREATE SCHEMA raw;
CREATE SCHEMA prod;
CREATE SCHEMA staging;
CREATE SEQUENCE prod.customer_seq;
CREATE TABLE prod.customer (
    customer_id INTEGER PRIMARY KEY DEFAULT nextval('prod.customer_seq'),
    first_name VARCHAR NOT NULL,
    last_name VARCHAR NOT NULL,
    email VARCHAR CHECK (email LIKE '%@%'),
    full_name VARCHAR,
    last_update TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE prod.payment (
    payment_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL REFERENCES prod.customer (customer_id),
    amount DECIMAL(6,2) NOT NULL,
    payment_date DATE NOT NULL,
    PRIMARY KEY (payment_id, payment_date)
);
CREATE TABLE prod.film (
    film_id INTEGER PRIMARY KEY,
    title VARCHAR NOT NULL UNIQUE,
    rating VARCHAR CHECK (rating IN ('G', 'PG', 'R')),
    rental_rate DECIMAL(4,2) NOT NULL DEFAULT 4.99,
    curator_id INTEGER REFERENCES prod.customer (customer_id),
    last_update TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE VIEW prod.film_list AS SELECT film_id, title, rating FROM prod.film;
CREATE VIEW prod.customer_list AS SELECT customer_id, full_name, email FROM prod.customer;
INSERT INTO prod.customer (first_name, last_name, email, full_name)
VALUES ('Ann', 'Lee', 'ann@x.org', 'Ann Lee'), ('Bo', 'Ng', 'bo@x.org', 'Bo Ng'), ('Cy', 'Oz', NULL, 'Cy Oz');
INSERT INTO prod.payment VALUES (1, 1, 9.99, '2026-01-05'), (2, 2, 4.50, '2026-02-07');
INSERT INTO prod.film VALUES (1, 'Alien', 'R', 2.99, 1, '2026-01-01 10:00:00+00'), (2, 'Bambi', 'G', 0.99, NULL, '2026-01-01 10:00:00+00');
CREATE TABLE raw.customer_raw AS SELECT * FROM prod.customer LIMIT 0;
CREATE TABLE raw.payment_raw AS SELECT * FROM prod.payment LIMIT 0;
CREATE TABLE raw.film_raw AS SELECT * FROM prod.film LIMIT 0;
CREATE TABLE staging.customer (
    customer_id INTEGER NOT NULL,
    first_name VARCHAR NOT NULL,
    last_name VARCHAR NOT NULL,
    email VARCHAR,
    full_name VARCHAR,
    last_update TIMESTAMPTZ NOT NULL
);
INSERT INTO staging.customer VALUES
    (1, 'Ann', 'Lee', 'ann@new.org', 'Ann Lee', '2026-03-01 10:00:00+00'),
    (2, 'Bo', 'Ng', 'bo@x.org', 'Bo Ng', '2026-03-01 10:00:00+00'),
    (4, 'Di', 'Park', 'di@x.org', 'Di Park', '2026-03-01 10:00:00+00'),
    (5, 'Ed', 'Ruiz', 'ed@x.org', 'Ed Ruiz', '2026-03-01 10:00:00+00');
CREATE TABLE staging.payment AS SELECT * FROM prod.payment;
INSERT INTO staging.payment VALUES (3, 4, 12.00, '2026-02-09');
CREATE TABLE staging.film AS SELECT * FROM prod.film LIMIT 0;
INSERT INTO staging.film VALUES
    (1, 'Alien', 'R', 1.99, 1, '2026-03-01 10:00:00+00'),
    (4, 'Dune', 'PG', 2.49, 4, '2026-03-01 10:00:00+00');
