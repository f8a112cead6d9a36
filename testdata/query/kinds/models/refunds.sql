select order_id, customer_id, refunded_on, amount from shop.refunds
