with stg_customers as (
    select * from {{ ref('stg_customers') }}
),

orders as (
    select
        customer_id,
        min(ordered_at) as first_order_at,
        count(*) as lifetime_orders
    from {{ ref('stg_orders') }}
    group by customer_id
)

select
    stg_customers.customer_id,
    stg_customers.full_name,
    stg_customers.email,
    orders.first_order_at,
    coalesce(orders.lifetime_orders, 0) as lifetime_orders,
    coalesce(orders.lifetime_orders, 0) > 1 as is_returning
from stg_customers
left join orders on orders.customer_id = stg_customers.customer_id
