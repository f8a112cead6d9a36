select 1 as order_id, 5 as amount
