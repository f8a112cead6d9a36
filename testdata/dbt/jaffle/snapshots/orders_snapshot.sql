{% snapshot orders_snapshot %}
{{ config(target_schema='snapshots', unique_key='id', strategy='timestamp', updated_at='ordered_at') }}
select * from {{ source('raw', 'orders') }}
{% endsnapshot %}
