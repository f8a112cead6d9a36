select 1 as order_id
