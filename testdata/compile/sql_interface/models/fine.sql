SELECT
    c.name,
    sum(o.amount) OVER (PARTITION BY c.id ORDER BY o.id) AS running,
    (SELECT max(x.total) FROM raw.totals AS x WHERE x.total > 0) AS best,
    list_transform([1, 2], v -> v + 1) AS bumped
FROM customers AS c
LEFT JOIN orders AS o ON o.customer_id = c.id
WHERE c.name IS NOT NULL
QUALIFY running > 0
ORDER BY running
