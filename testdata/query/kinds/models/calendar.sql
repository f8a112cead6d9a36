select day from shop.calendar
