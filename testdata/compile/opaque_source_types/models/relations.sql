SELECT c.oid, c.relname, c.relname AS relname_text, h.address, h.port, h.port AS port_int
FROM pg_class AS c
CROSS JOIN hosts AS h
