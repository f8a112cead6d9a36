select day, fiscal_month from shop.calendar
