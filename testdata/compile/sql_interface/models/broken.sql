SELECT c.id AS customer_id, c.email, o.amount
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.id
WHERE c.segment = 'vip'
  AND id > 0
ORDER BY amount
