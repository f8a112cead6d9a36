-- One column of each type pg_catalog defines that a table column can have (named after the
-- type). The catalog's own relations (sources/catalog.toml) add the types only it can have,
-- such as anyarray.
CREATE SCHEMA raw;
CREATE TABLE raw.every_type ();
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT typname, format_type(oid, NULL) AS spelled FROM pg_type
             WHERE typnamespace = 'pg_catalog'::regnamespace AND typisdefined ORDER BY oid LOOP
        BEGIN
            EXECUTE format('ALTER TABLE raw.every_type ADD COLUMN %I %s', t.typname, t.spelled);
        EXCEPTION WHEN others THEN
            NULL;
        END;
    END LOOP;
END $$;
