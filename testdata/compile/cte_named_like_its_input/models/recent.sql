WITH orders AS (SELECT id FROM orders), kept AS (SELECT id FROM orders)
SELECT id FROM kept
