select
    id as refund_id,
    order_id,
    customer_id,
    requested_at,
    refunded_at,
    reason,
    cast(amount_cents / 100.0 as decimal(12, 2)) as amount
from raw.refunds
