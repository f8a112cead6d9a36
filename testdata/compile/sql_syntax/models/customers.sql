SELECT 'unterminated AS name
