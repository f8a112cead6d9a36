select order_id, refunded_on, amount from shop.refunds
