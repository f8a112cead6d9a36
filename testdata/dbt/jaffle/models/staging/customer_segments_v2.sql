select
    customer_id,
    case when email like '%@example.com' then 'internal' else 'external' end as segment
from {{ ref('stg_customers') }}
