-- Inside its own definition a CTE's name is not in scope: this reads the model `recent`, so
-- `orders` and `recent` read each other (a cycle), as dbt-compiled SQL often spells it.
WITH recent AS (SELECT * FROM recent)
SELECT 1 AS id FROM recent
