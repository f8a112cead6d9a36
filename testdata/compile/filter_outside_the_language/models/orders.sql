select 1 as order_id, cast(9.5 as numeric(12,2)) as amount, 'placed' as status, 'a note' as note, current_date as placed_on
