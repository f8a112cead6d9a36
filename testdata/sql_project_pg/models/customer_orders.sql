WITH recent AS (
    SELECT order_id, customer_id, amount, created_at
    FROM stg_orders
    WHERE created_at IS NOT NULL
),
ranked AS (
    SELECT r.*, row_number() OVER (PARTITION BY r.customer_id ORDER BY r.created_at DESC) AS rn
    FROM recent AS r
)
SELECT c.customer_id, c.name, k.order_id, k.amount, k.rn
FROM stg_customers AS c
LEFT JOIN ranked AS k ON k.customer_id = c.customer_id
WHERE c.name IS NOT NULL
ORDER BY c.customer_id
