select 1 as customer_id, cast('2024-01-31' as date) as as_of, cast(9.5 as decimal(12,2)) as balance
