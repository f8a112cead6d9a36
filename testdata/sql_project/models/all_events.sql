SELECT order_id AS id, CAST('order' AS VARCHAR) AS kind FROM stg_orders
UNION ALL
SELECT customer_id AS id, CAST('customer' AS VARCHAR) AS kind FROM stg_customers
