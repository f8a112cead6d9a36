select 1 as payment_id, 'card' as method
