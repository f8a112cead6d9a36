-- `staged` is a model the target has not built.
SELECT s.id, s.status
FROM staged AS s
