SELECT
    order_id,
    customer_id,
    ordered_at,
    status,
    fulfillment,
    amount,
    amount >= 100 AS is_large
FROM stg_orders
