select id as customer_id, name as customer_name, segment from raw.customers
