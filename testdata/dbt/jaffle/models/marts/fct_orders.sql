{{
    config(
        materialized='incremental',
        unique_key='order_id',
        on_schema_change='append_new_columns'
    )
}}

with orders as (
    select * from {{ ref('stg_orders') }}
),

payments as (
    select * from {{ ref('int_order_payments') }}
)

select
    orders.order_id,
    orders.customer_id,
    orders.status,
    orders.ordered_at,
    orders.order_date,
    cast(orders.amount_cents / 100.0 as numeric(38, 3)) as amount,
    cast(coalesce(payments.payment_total, 0) as numeric(38, 3)) as payment_total
from orders
left join payments on payments.order_id = orders.order_id
{% if is_incremental() %}
where orders.ordered_at > (select max(ordered_at) from {{ this }})
{% endif %}
