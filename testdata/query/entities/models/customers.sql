select 7 as customer_id, 'smb' as segment, 'gold' as tier
