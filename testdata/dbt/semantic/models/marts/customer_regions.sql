-- A second semantic model whose primary entity is `customer`: MetricFlow reaches `region`
-- through it, since `customers` has none. Customer 5 has no region.
select customer_id, case when customer_id % 2 = 0 then 'north' else 'south' end as region
from {{ ref('stg_customers') }}
where customer_id <> 5
