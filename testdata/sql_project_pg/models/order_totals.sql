-- Postgres's max() drops the argument's precision (max of a NUMERIC(12,2) is a NUMERIC): cast it.
SELECT o.customer_id, count(*) AS orders, CAST(max(o.amount) AS NUMERIC(12,2)) AS biggest
FROM (SELECT customer_id, amount FROM stg_orders) AS o
GROUP BY o.customer_id
HAVING count(*) > 0
