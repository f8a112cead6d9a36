SELECT
    c.customer_id,
    c.name,
    c.email,
    min(o.ordered_at) AS first_ordered_at,
    count(o.order_id) AS order_count,
    CAST(coalesce(sum(o.amount), 0) AS NUMERIC(14,2)) AS lifetime_value
FROM stg_customers AS c
LEFT JOIN stg_orders AS o ON o.customer_id = c.customer_id
GROUP BY c.customer_id, c.name, c.email
