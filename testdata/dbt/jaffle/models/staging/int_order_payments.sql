{{ config(materialized='ephemeral') }}

select
    order_id,
    sum(amount) as payment_total,
    count(*) as payment_count
from {{ ref('stg_payments') }}
group by order_id
