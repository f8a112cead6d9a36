select 1 as order_id, cast('2024-01-03' as date) as ordered_on, 5 as amount
