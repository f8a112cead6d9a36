SELECT id, extract(year FROM created_at) FROM raw.customers
