-- A column grouped outside the ROLLUP is in every set; COALESCE and count(*) are never NULL.
SELECT s.id AS id, coalesce(s.channel, CAST('all' AS TEXT)) AS channel, count(*) AS n
FROM sales AS s
GROUP BY s.id, ROLLUP (s.channel)
