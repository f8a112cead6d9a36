SELECT {{ column }}, count(*) FROM {{ relation }} GROUP BY 1 HAVING count(*) > 1
