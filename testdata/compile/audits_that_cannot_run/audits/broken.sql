SELECT * FROM {{ relation }} WHERE {{ 1 + 1 }}
