{{ config(meta={'owner': 'commerce'}) }}

with source as (
    select id, customer_id, status, ordered_at, amount_cents from {{ source('raw', 'orders') }}
)

select
    id as order_id,
    customer_id,
    status,
    ordered_at,
    cast(ordered_at as date) as order_date,
    amount_cents
from source
