SELECT *
FROM (SELECT avg(ss_list_price) AS b1_lp, count(ss_list_price) AS b1_cnt, count(DISTINCT ss_list_price) AS b1_cntd
      FROM store_sales
      WHERE ss_quantity BETWEEN 0 AND 5
        AND (ss_list_price BETWEEN 8 AND 8 + 10 OR ss_coupon_amt BETWEEN 459 AND 459 + 1000 OR ss_wholesale_cost BETWEEN 57 AND 57 + 20)) b1,
     (SELECT avg(ss_list_price) AS b2_lp, count(ss_list_price) AS b2_cnt, count(DISTINCT ss_list_price) AS b2_cntd
      FROM store_sales
      WHERE ss_quantity BETWEEN 6 AND 10
        AND (ss_list_price BETWEEN 90 AND 90 + 10 OR ss_coupon_amt BETWEEN 2323 AND 2323 + 1000 OR ss_wholesale_cost BETWEEN 31 AND 31 + 20)) b2
LIMIT 100
