-- USING and NATURAL merge the columns they join on: a bare `id` is not ambiguous, and a
-- column only the right side has is that side's (no E054 for the enforced left side).
SELECT id, c.name, amount
FROM customers AS c
JOIN orders AS o USING (id)
UNION ALL
SELECT id, name, amount FROM customers NATURAL JOIN orders
