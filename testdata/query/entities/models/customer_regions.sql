select 7 as customer_id, CAST('2026-01-01' AS DATE) as since, 'north' as region
