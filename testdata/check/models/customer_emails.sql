SELECT c.id AS customer_id, c.email, t.total
FROM customers AS c
JOIN order_totals AS t ON t.customer_id = c.id
