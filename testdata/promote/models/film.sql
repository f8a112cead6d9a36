SELECT * FROM raw.film_raw
