SELECT 2 AS id, CAST('store' AS TEXT) AS channel
