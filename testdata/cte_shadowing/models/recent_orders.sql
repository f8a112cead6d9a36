WITH orders AS (SELECT * FROM orders WHERE amount > 0)
SELECT id, amount FROM orders
