{{ config(enabled=false) }}

select * from {{ source('raw', 'orders') }}
