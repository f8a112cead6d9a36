select cast(d as date) as date_day
from generate_series(date '2023-12-01', date '2024-04-30', interval 1 day) as t(d)
