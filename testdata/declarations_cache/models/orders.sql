SELECT 1 AS order_id, CAST(9.5 AS NUMERIC(18,2)) AS amount
