SELECT 1 AS id, 2 AS parent_id, 3 AS amount, 4 AS other, 5 AS total
