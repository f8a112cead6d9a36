-- A three-way join through CTEs and USING: it reads order_id, customer_id, amount and status
-- of fct_orders, and customer_id and name of dim_customers; nothing else.
WITH o AS (
    SELECT order_id, customer_id, amount, status FROM analytics.fct_orders
),
c AS (
    SELECT * FROM analytics.dim_customers
)
SELECT o.order_id, c.name, o.amount
FROM o
JOIN c USING (customer_id)
JOIN analytics.fct_orders AS f ON f.order_id = o.order_id
WHERE o.status <> 'void'
