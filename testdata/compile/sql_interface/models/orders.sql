SELECT CAST(id AS INTEGER) AS id, CAST(customer_id AS INTEGER) AS customer_id, CAST(amount AS DOUBLE) AS amount
FROM raw.orders
