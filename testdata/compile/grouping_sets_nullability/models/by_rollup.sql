-- ROLLUP's grand-total row has NULL for every rolled-up column, however it is declared upstream.
SELECT s.channel AS channel, count(*) AS n
FROM sales AS s
GROUP BY ROLLUP (s.channel)
