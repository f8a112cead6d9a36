select 1 as order_id, cast(2 as bigint) as customer_id, 'a' as status, 3 as placed_on, 4 as score
