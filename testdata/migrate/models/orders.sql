SELECT * FROM raw.orders_raw
