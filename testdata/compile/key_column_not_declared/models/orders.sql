SELECT 1 AS order_id, now() AS updated
