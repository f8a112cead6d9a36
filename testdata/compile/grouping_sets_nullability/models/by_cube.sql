-- CUBE adds every subset of its columns, the empty one too.
SELECT channel, s.id AS id, count(*) AS n
FROM sales AS s
GROUP BY CUBE (channel, s.id)
