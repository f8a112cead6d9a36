-- Production has what real schemas have: a serial key, a generated column, a full-text index,
-- a BEFORE trigger, a CHECK, comments, a column grant and another owner; a partitioned table
-- and a plain one referencing it (RESTRICT and CASCADE); a view, a materialized view over the
-- view, one never populated, and a SQL function returning its row type. Those are published
-- by a copy in place. `prod.film` is read only by views, so it is swapped: it has everything a
-- swap must carry (a serial key, a UNIQUE and a CHECK, a foreign key out, defaults, a
-- clustered index with a storage parameter, a full-text index, an enabled and a disabled
-- trigger, table and column grants, comments on all of these, another owner) and views with
-- options, grants, a check option, a view over a view and a materialized view over that.
DO $$ BEGIN
  BEGIN CREATE ROLE sqb_promote_owner NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  BEGIN CREATE ROLE sqb_promote_reader NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
END $$;
CREATE SCHEMA raw;
CREATE SCHEMA prod;
CREATE SCHEMA staging;
GRANT USAGE ON SCHEMA prod TO sqb_promote_owner;

CREATE TABLE prod.customer (
    customer_id serial PRIMARY KEY,
    first_name text NOT NULL,
    last_name text NOT NULL,
    email text CHECK (email LIKE '%@%'),
    full_name text GENERATED ALWAYS AS (first_name || ' ' || last_name) STORED,
    last_update timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_name_fts ON prod.customer USING gin (to_tsvector('simple', first_name || ' ' || last_name));
CREATE FUNCTION prod.touch() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN NEW.last_update := now(); RETURN NEW; END
$f$;
CREATE TRIGGER customer_touch BEFORE INSERT OR UPDATE ON prod.customer
    FOR EACH ROW EXECUTE FUNCTION prod.touch();
COMMENT ON TABLE prod.customer IS 'one row per customer';
COMMENT ON COLUMN prod.customer.email IS 'where to write';
GRANT SELECT (customer_id, first_name) ON prod.customer TO sqb_promote_reader;
ALTER TABLE prod.customer OWNER TO sqb_promote_owner;

CREATE TABLE prod.payment (
    payment_id integer NOT NULL,
    customer_id integer NOT NULL REFERENCES prod.customer (customer_id) ON DELETE RESTRICT,
    amount numeric(6,2) NOT NULL,
    payment_date date NOT NULL,
    PRIMARY KEY (payment_id, payment_date)
) PARTITION BY RANGE (payment_date);
CREATE TABLE prod.payment_2026_01 PARTITION OF prod.payment FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE prod.payment_2026_02 PARTITION OF prod.payment FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');

CREATE TABLE prod.rental (
    rental_id serial PRIMARY KEY,
    customer_id integer REFERENCES prod.customer (customer_id) ON DELETE CASCADE
);

CREATE VIEW prod.customer_list AS SELECT customer_id, full_name, email FROM prod.customer;
CREATE MATERIALIZED VIEW prod.customer_count AS SELECT count(*) AS customers FROM prod.customer_list;
CREATE MATERIALIZED VIEW prod.customer_emails AS SELECT email FROM prod.customer WITH NO DATA;
CREATE FUNCTION prod.customers_named(p text) RETURNS SETOF prod.customer LANGUAGE sql STABLE
    AS $f$ SELECT * FROM prod.customer WHERE first_name = p $f$;

INSERT INTO prod.customer (first_name, last_name, email)
VALUES ('Ann', 'Lee', 'ann@x.org'), ('Bo', 'Ng', 'bo@x.org'), ('Cy', 'Oz', NULL);
INSERT INTO prod.payment VALUES (1, 1, 9.99, '2026-01-05'), (2, 2, 4.50, '2026-02-07');
INSERT INTO prod.rental (customer_id) VALUES (1), (2);
REFRESH MATERIALIZED VIEW prod.customer_count;

CREATE TABLE prod.film (
    film_id serial PRIMARY KEY,
    title text NOT NULL CONSTRAINT film_title_key UNIQUE,
    rating text CHECK (rating IN ('G', 'PG', 'R')),
    rental_rate numeric(4,2) NOT NULL DEFAULT 4.99,
    curator_id integer REFERENCES prod.customer (customer_id),
    last_update timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX film_title_fts ON prod.film USING gin (to_tsvector('simple', title));
CREATE INDEX film_rating_idx ON prod.film (rating) WITH (fillfactor = 70);
ALTER TABLE prod.film CLUSTER ON film_rating_idx;
CREATE TRIGGER film_touch BEFORE UPDATE ON prod.film FOR EACH ROW EXECUTE FUNCTION prod.touch();
CREATE TRIGGER film_touch_insert BEFORE INSERT ON prod.film FOR EACH ROW EXECUTE FUNCTION prod.touch();
ALTER TABLE prod.film DISABLE TRIGGER film_touch_insert;
COMMENT ON TABLE prod.film IS 'one row per film; it''s \ quoted';
COMMENT ON COLUMN prod.film.rating IS 'the MPAA rating';
COMMENT ON CONSTRAINT film_title_key ON prod.film IS 'one film per title';
COMMENT ON INDEX prod.film_title_fts IS 'what search reads';
COMMENT ON TRIGGER film_touch ON prod.film IS 'keeps last_update';
GRANT SELECT ON prod.film TO sqb_promote_reader;
GRANT UPDATE (title) ON prod.film TO sqb_promote_reader WITH GRANT OPTION;
ALTER TABLE prod.film OWNER TO sqb_promote_owner;
CREATE VIEW prod.film_list WITH (security_barrier = true) AS SELECT film_id, title, rating FROM prod.film;
COMMENT ON VIEW prod.film_list IS 'films as the shop lists them';
GRANT SELECT ON prod.film_list TO sqb_promote_reader;
CREATE VIEW prod.cheap_films AS SELECT * FROM prod.film WHERE rental_rate < 3 WITH LOCAL CHECK OPTION;
CREATE VIEW prod.film_titles AS SELECT title FROM prod.film_list;
CREATE MATERIALIZED VIEW prod.film_count AS SELECT count(*) AS films FROM prod.film_titles;
INSERT INTO prod.film (title, rating, rental_rate, curator_id)
VALUES ('Alien', 'R', 2.99, 1), ('Bambi', 'G', 0.99, NULL), ('Casablanca', 'PG', 4.99, 2);
REFRESH MATERIALIZED VIEW prod.film_count;

CREATE TABLE raw.customer_raw AS SELECT * FROM prod.customer WITH NO DATA;
CREATE TABLE raw.payment_raw AS SELECT * FROM prod.payment WITH NO DATA;
CREATE TABLE raw.film_raw AS SELECT * FROM prod.film WITH NO DATA;

-- Staging, as a build with enforced contracts makes it: columns with NOT NULL, then rows.
-- Customer 1 changed, 3 is gone (nothing references it), 4 and 5 are new.
CREATE TABLE staging.customer (
    customer_id integer NOT NULL,
    first_name text NOT NULL,
    last_name text NOT NULL,
    email text,
    full_name text,
    last_update timestamptz NOT NULL
);
INSERT INTO staging.customer VALUES
    (1, 'Ann', 'Lee', 'ann@new.org', 'Ann Lee', '2026-03-01 10:00:00+00'),
    (2, 'Bo', 'Ng', 'bo@x.org', 'Bo Ng', '2026-03-01 10:00:00+00'),
    (4, 'Di', 'Park', 'di@x.org', 'Di Park', '2026-03-01 10:00:00+00'),
    (5, 'Ed', 'Ruiz', 'ed@x.org', 'Ed Ruiz', '2026-03-01 10:00:00+00');
CREATE TABLE staging.payment AS SELECT * FROM prod.payment;
INSERT INTO staging.payment VALUES (3, 4, 12.00, '2026-02-09');
-- A table build (`CREATE TABLE AS`): bare columns, the rows. Alien is cheaper now, Bambi is
-- gone, Dune is new (curated by a customer the copy publishes).
CREATE TABLE staging.film AS SELECT * FROM prod.film WITH NO DATA;
INSERT INTO staging.film VALUES
    (1, 'Alien', 'R', 1.99, 1, '2026-03-01 10:00:00+00'),
    (3, 'Casablanca', 'PG', 4.99, 2, '2026-03-01 10:00:00+00'),
    (4, 'Dune', 'PG', 2.49, 4, '2026-03-01 10:00:00+00');
