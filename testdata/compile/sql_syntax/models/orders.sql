SELECT id,
       amount +
FROM raw.orders
