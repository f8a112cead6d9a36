select cast(1 as integer) as payment_id, cast(9.5 as decimal(12,2)) as amount, 'card' as method
