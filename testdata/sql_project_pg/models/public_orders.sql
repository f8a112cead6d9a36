SELECT o.order_id, o.customer_id, CAST(o.amount AS NUMERIC(12,2)) AS amount, o.created_at
FROM stg_orders AS o
