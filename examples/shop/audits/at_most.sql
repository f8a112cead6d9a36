-- A user-defined audit (docs/audits.md): the rows whose audited column is above `max`.
-- `{{ relation }}` and `{{ column }}` become quoted identifiers; `{{ max }}` a bound value.
SELECT * FROM {{ relation }} WHERE {{ column }} > {{ max }}
