-- Reads a landing table no project declares: its SQL proves no type.
SELECT * FROM landing.events
