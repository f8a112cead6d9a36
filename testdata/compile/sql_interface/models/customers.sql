SELECT CAST(id AS INTEGER) AS id, CAST(name AS VARCHAR) AS name FROM raw.customers
