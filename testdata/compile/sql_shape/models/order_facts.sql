WITH base AS (
    SELECT * FROM orders
)
SELECT b.*, 1 AS one
FROM base AS b
LEFT JOIN customers AS c ON c.id = b.customer_id
