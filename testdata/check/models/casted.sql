SELECT id AS order_id,
       CAST(amount AS NUMERIC(12, 2)) AS amount,
       CAST(status AS VARCHAR(40)) AS status
FROM shop.orders;
