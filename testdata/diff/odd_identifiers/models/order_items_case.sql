SELECT * FROM "Odd Schema"."Order Items"
