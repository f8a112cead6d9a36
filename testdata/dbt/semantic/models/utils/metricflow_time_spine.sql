select
    cast(d as date) as date_day,
    -- Fiscal quarters start in February, May, August and November.
    cast(date_trunc('quarter', d - interval '1 month') + interval '1 month' as date) as fiscal_quarter
from generate_series(date '2023-12-01', date '2024-04-30', interval '1 day') as t(d)
