select order_id, customer_id, ordered_on, amount, quantity, rush, shipped_on from shop.orders
