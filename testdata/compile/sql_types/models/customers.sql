SELECT 1 AS id, 'x' AS name
