DELETE FROM {{ relation }} WHERE {{ column }} IS NULL
