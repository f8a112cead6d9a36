SELECT * FROM raw.customer_raw
