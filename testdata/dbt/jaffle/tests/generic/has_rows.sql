{% test has_rows(model) %}
select 1 as missing where (select count(*) from {{ model }}) = 0
{% endtest %}
