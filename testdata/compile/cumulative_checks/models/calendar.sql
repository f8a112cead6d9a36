select cast('2024-01-01' as date) as date_day
