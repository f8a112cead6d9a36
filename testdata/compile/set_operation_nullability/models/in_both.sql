-- INTERSECT keeps only rows found in both branches: non-null where either side is.
SELECT CAST(NULL AS TEXT) AS channel
INTERSECT
SELECT s.channel AS channel FROM sales AS s
