SELECT * EXCLUDE (status) REPLACE (CAST(amount AS NUMERIC(12,2)) AS amount)
FROM stg_orders
