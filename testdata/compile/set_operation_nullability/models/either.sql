-- UNION has the rows of both branches: the NULL of the second is in the output.
SELECT s.channel AS channel FROM sales AS s
UNION ALL
SELECT CAST(NULL AS TEXT) AS channel
