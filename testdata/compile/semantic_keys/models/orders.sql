select 1 as order_id, cast(9.5 as decimal(12,2)) as amount, current_date as placed_on
