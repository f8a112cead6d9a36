SELECT id, email FROM users
UNION ALL
SELECT id, email FROM public_users
