select 1 as order_id, 7 as customer_id, 8 as buyer_id, cast(9.5 as decimal(12,2)) as amount, current_date as placed_on
