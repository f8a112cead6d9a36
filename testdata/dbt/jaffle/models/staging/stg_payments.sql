select
    id as payment_id,
    order_id,
    method,
    amount
from {{ source('raw', 'payments') }}
