-- Rows whose audited column is above `max`: `{ at_most = { max = 900 } }`.
SELECT * FROM {{ relation }} WHERE {{ column }} > {{ max }}
