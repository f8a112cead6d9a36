SELECT
    CAST(1 AS INTEGER) AS order_id,
    CAST(1 AS INTEGER) AS customer_id,
    CAST(9.99 AS DECIMAL(10,2)) AS amount,
    CAST('new' AS VARCHAR(255)) AS status,
    CAST(NULL AS VARCHAR(255)) AS note,
    CAST(1 AS INTEGER) AS quantity
