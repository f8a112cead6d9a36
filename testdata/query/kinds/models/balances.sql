select customer_id, as_of, balance from shop.balances
