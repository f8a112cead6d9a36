/* Of a whole relation: the rows whose `field` holds none of `values`, by their `key`. */
SELECT {{ ident(key) }}
FROM {{ relation }}
WHERE {{ ident(field) }} NOT IN {{ values }};
