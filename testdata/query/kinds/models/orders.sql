select order_id, customer_id, ordered_on, amount, quantity, rush from shop.orders
