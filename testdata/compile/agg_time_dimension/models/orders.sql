select 1 as order_id, cast('2024-01-03' as date) as ordered_on, 'placed' as status, cast(9.5 as decimal(12,2)) as amount
