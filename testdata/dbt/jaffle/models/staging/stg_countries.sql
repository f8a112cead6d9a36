select code as country_code, name as country_name from {{ ref('country_codes') }}
