select
    id as order_id,
    customer_id,
    ordered_at,
    cast(ordered_at as date) as order_date,
    status,
    cast(amount_cents / 100.0 as decimal(12, 2)) as amount
from raw.orders
