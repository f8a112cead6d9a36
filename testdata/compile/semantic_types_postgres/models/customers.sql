select 1 as customer_id
