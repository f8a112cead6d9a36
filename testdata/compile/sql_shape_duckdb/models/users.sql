SELECT id, email, password_hash, created_at FROM raw.users
