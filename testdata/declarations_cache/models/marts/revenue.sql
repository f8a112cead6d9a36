SELECT 1 AS order_id
