SELECT o.id AS order_id, o.customer_id, o.amount
FROM shop.orders AS o
