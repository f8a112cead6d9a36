{{ config(alias='daily_revenue') }}

select
    order_date,
    cast(sum(amount) as numeric(38, 3)) as revenue,
    count(*) as orders,
    'USD' as currency
from {{ ref('fct_orders') }}
group by order_date
