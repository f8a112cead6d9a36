SELECT a.id
FROM b AS a
JOIN raw.external_table AS e ON e.id = a.id
