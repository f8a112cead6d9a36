{# dbt_utils.unique_combination_of_columns, as a project's own generic test (no packages). #}
{% test unique_combination_of_columns(model, combination_of_columns) %}
{%- set columns_csv = combination_of_columns | join(', ') %}
select {{ columns_csv }}
from {{ model }}
group by {{ columns_csv }}
having count(*) > 1
{% endtest %}
