SELECT id, upper(name) FROM raw.customers
