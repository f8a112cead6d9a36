SELECT 1 AS id, 2 AS extra
