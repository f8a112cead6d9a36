select customer_id, 'all' as segment from {{ ref('stg_customers') }}
