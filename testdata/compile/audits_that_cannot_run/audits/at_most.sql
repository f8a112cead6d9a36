-- Rows whose column is above `max`.
SELECT * FROM {{ relation }} WHERE {{ column }} > {{ max }}
