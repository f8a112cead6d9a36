-- Reads the shop's published marts by their relations; sqb compile reports any change the
-- shop makes to a column read here.
SELECT c.customer_id, c.name, count(*) AS large_orders, sum(o.amount) AS large_amount
FROM analytics.fct_orders AS o
JOIN analytics.dim_customers AS c ON c.customer_id = o.customer_id
WHERE o.is_large
GROUP BY c.customer_id, c.name
