-- Not read: the project file names the dialect, and it does not parse.
SELECT 1 AS id FROM
