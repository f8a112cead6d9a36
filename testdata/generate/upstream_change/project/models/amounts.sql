SELECT amount FROM raw.payments
