select 1 as order_id, 7 as customer_id, cast('2024-01-09' as date) as refunded_on
