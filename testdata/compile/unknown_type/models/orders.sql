SELECT 1 AS a, 1 AS b, 1 AS c, 1 AS d, 1 AS e, 1 AS f, 1 AS g, 1 AS h
