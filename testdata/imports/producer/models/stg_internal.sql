-- Not public: never published.
SELECT CAST(1 AS INTEGER) AS id
