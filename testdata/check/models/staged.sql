SELECT id, status FROM shop.orders
