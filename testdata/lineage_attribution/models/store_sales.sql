-- `store_name` is declared only by `stores`, `amount` only by `sales`; `region` by neither.
SELECT store_name, amount, region, count(*) AS n
FROM sales, stores
WHERE channel = store_name
GROUP BY store_name, amount, region
