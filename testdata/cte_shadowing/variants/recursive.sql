-- Under WITH RECURSIVE the inner `orders` is the CTE itself, never the model: `n` is no E054.
WITH RECURSIVE orders AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM orders WHERE n < 5)
SELECT CAST(n AS INTEGER) AS id, CAST(n AS DECIMAL(10,2)) AS amount FROM orders
