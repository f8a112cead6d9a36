SELECT id AS order_id, customer_id, ordered_at, status, fulfillment, amount
FROM raw.orders
