SELECT 1 AS id, CAST('web' AS TEXT) AS channel
