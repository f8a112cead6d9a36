SELECT amount FROM amounts
