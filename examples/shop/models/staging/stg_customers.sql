-- No sidecar: an undeclared model is compiled, selected and diffed as having no declarations.
SELECT id AS customer_id, name, email, created_at
FROM raw.customers
