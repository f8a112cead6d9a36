SELECT 1 AS payment_id
