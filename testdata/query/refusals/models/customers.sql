select 7 as customer_id, 'north' as region
