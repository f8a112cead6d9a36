CREATE SCHEMA shop;
CREATE TABLE shop.items (id integer NOT NULL, "Quantity" integer, price numeric(10,2));
CREATE VIEW shop.item_totals AS SELECT id, "Quantity" * price AS total FROM shop.items;
CREATE VIEW shop.in_stock AS SELECT id FROM shop.items WHERE "Quantity" > 0;
