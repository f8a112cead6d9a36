SELECT o.id AS order_id, o.customer_id, o.amount, o.created_at AS OrderedAt
FROM raw.orders AS o
