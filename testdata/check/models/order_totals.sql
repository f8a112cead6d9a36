SELECT customer_id, count(*) AS orders, sum(amount) AS total
FROM shop.orders
GROUP BY customer_id
