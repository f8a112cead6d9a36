select '2024-01' as month_name
