select amount from raw.payments
