SELECT s_store_name, sum(ss_net_profit) AS net_profit
FROM store_sales, date_dim, store,
     (SELECT ca_zip
      FROM (SELECT substr(ca_zip, 1, 5) AS ca_zip
            FROM customer_address
            WHERE substr(ca_zip, 1, 5) IN ('24128', '76232', '65084', '87816', '83926')
            INTERSECT
            SELECT ca_zip
            FROM (SELECT substr(ca_zip, 1, 5) AS ca_zip, count(*) AS cnt
                  FROM customer_address, customer
                  WHERE ca_address_sk = c_current_addr_sk AND c_preferred_cust_flag = 'Y'
                  GROUP BY ca_zip
                  HAVING count(*) > 10) a1) a2) v1
WHERE ss_store_sk = s_store_sk
  AND ss_sold_date_sk = d_date_sk
  AND d_qoy = 2 AND d_year = 1998
  AND (substr(s_zip, 1, 2) = substr(v1.ca_zip, 1, 2))
GROUP BY s_store_name
ORDER BY s_store_name
LIMIT 100
