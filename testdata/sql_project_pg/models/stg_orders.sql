SELECT id AS order_id, customer_id, amount, status, created_at
FROM raw.orders
