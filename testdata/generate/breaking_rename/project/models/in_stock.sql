SELECT id
FROM shop.items
WHERE quantity > 0
