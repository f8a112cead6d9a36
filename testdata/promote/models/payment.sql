SELECT * FROM raw.payment_raw
