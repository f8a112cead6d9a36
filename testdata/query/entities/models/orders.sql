select 1 as order_id, 7 as customer_id, CAST(10.0 AS numeric(10,2)) as amount
