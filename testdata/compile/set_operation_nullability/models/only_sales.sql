-- EXCEPT keeps only rows of its first branch: a NULL in the second never reaches the output.
SELECT s.channel AS channel FROM sales AS s
EXCEPT
SELECT CAST(NULL AS TEXT) AS channel
