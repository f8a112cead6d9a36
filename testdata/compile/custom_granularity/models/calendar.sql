select cast('2024-01-01' as date) as date_day, 'FY24-Q3' as fiscal_quarter
