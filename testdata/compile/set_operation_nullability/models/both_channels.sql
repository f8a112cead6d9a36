-- Lineage names every branch's upstream column.
SELECT s.channel AS channel FROM sales AS s
UNION ALL
SELECT r.channel AS channel FROM returns AS r
