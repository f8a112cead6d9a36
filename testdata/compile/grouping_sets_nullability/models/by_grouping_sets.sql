-- A column absent from one of the sets is NULL in that set's rows.
SELECT s.channel AS channel, s.id AS id, count(*) AS n
FROM sales AS s
GROUP BY GROUPING SETS ((s.channel, s.id), (s.id))
