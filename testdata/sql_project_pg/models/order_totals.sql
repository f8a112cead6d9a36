SELECT o.customer_id, count(*) AS orders, max(o.amount) AS biggest
FROM (SELECT customer_id, amount FROM stg_orders) AS o
GROUP BY o.customer_id
HAVING count(*) > 0
