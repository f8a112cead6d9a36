SELECT
    o.id,
    CAST(o.amount AS NUMERIC(10,2)) AS amount,
    count(*) AS n,
    c.name AS customer_name,
    o.id > 5 AS big,
    coalesce(o.note, '') AS note,
    upper(o.note) AS shout
FROM raw.orders AS o
LEFT JOIN customers AS c ON c.id = o.id
GROUP BY o.id, o.amount, c.name, o.note
