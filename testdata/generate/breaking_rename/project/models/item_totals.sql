SELECT id, quantity * price AS total
FROM shop.items
