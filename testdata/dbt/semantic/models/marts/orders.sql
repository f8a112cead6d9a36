select
    order_id,
    customer_id,
    ordered_at,
    order_date,
    status,
    amount,
    amount >= 50 as is_large
from {{ ref('stg_orders') }}
