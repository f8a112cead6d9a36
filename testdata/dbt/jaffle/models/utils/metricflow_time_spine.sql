with recursive days (date_day) as (
    select cast('2026-01-01' as date)
    union all
    select cast(date_day + interval '1 day' as date) from days where date_day < cast('2026-12-31' as date)
)

select date_day from days
