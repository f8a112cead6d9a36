SELECT
    CAST(1 AS INTEGER) AS customer_id,
    CAST('Ada' AS VARCHAR(100)) AS name,
    CAST(3 AS BIGINT) AS lifetime_orders
