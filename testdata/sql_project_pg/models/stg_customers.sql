SELECT id AS customer_id, name, email
FROM raw.customers
