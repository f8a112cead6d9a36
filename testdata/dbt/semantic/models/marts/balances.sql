select customer_id, balance_date, balance from raw.balances
