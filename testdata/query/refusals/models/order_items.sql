select 1 as order_id, 'sku-1' as sku
