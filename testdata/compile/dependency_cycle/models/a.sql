WITH b AS (SELECT 1 AS id)   -- a CTE named like a model is not a dependency
SELECT id FROM b
UNION ALL
SELECT id FROM c
