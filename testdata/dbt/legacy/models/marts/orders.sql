with stg_orders as (
    select * from {{ ref('stg_orders') }}
)

select order_id, status from stg_orders
