-- `region` is not declared by the open source `customers`: it may still be there, no error.
SELECT c.id, c.region, o.amount
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.id
