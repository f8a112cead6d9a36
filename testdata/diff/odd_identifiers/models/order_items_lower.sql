SELECT * FROM analytics.order_items_lower
