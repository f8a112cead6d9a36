-- Reads a model of its own project and an import: analysed after orders_report.
SELECT r.order_id
FROM orders_report AS r
JOIN analytics.fct_orders AS f ON f.order_id = r.order_id
WHERE f.note IS NOT NULL
