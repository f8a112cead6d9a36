SELECT customer_id, name, email, first_ordered_at, order_count, lifetime_value
FROM analytics.dim_customers
