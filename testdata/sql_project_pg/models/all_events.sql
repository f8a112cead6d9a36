SELECT order_id AS id, 'order'::text AS kind FROM stg_orders
UNION ALL
SELECT customer_id AS id, 'customer'::text AS kind FROM stg_customers
