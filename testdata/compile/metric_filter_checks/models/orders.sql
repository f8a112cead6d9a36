select 1 as order_id, 7 as customer_id, cast('2024-01-03' as date) as ordered_on
