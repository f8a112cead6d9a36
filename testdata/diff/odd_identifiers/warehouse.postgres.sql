CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Order Items" ("Order ID" integer NOT NULL, "select" text, "naïve" integer, "quote""d" integer, "MixedCase" integer, "a.b" integer);
-- A twin of "Order Items" up to case (Postgres only): the models that name "Order Items"
-- exactly compare with it, never with the twin; "order items" is still said to differ by case.
CREATE TABLE "Odd Schema"."ORDER ITEMS" ("Order ID" text);
