CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Order Items" ("Order ID" integer NOT NULL, "select" text, "naïve" integer, "quote""d" integer, "MixedCase" integer, "a.b" integer);
