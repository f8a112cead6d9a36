-- DuckDB star modifiers: EXCLUDE drops a column, REPLACE keeps its name and place.
SELECT * EXCLUDE (password_hash) REPLACE (lower(email) AS email)
FROM users
