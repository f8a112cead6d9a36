SELECT customer_id, amount FROM orders WHERE amount > 100
