-- `*` over a complete source: its declared columns, proven.
SELECT * FROM orders
