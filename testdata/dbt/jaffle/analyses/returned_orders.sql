select * from {{ ref('fct_orders') }} where status = 'returned'
