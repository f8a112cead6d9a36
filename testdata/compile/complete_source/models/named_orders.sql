-- Unqualified columns over an open and a complete source: each proven from the one that
-- declares it (`id`, merged by USING, from both); `orders` is complete and lacks `discount`: E054.
SELECT id, name, amount, o.discount
FROM orders AS o
JOIN customers USING (id)
