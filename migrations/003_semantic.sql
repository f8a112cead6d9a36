-- What the semantic contracts need to show: an order the backend wrote after the mart was last
-- built (revenue's provisional realization, contracts/guardrails/finality-revenue.toml), and
-- customers' account balances by day (a semi-additive metric: summed over customers, never
-- over days).

INSERT INTO raw.orders VALUES
    (104, 2, TIMESTAMP WITH TIME ZONE '2026-04-06 10:00:00+00', 'placed', 'pickup', 40.00);

CREATE TABLE raw.account_balances (
    customer_id INTEGER NOT NULL,
    as_of DATE NOT NULL,
    balance NUMERIC(12,2) NOT NULL
);

INSERT INTO raw.account_balances VALUES
    (1, DATE '2026-04-01', 100.00),
    (1, DATE '2026-04-02', 80.00),
    (1, DATE '2026-04-03', 95.50),
    (2, DATE '2026-04-01', 20.00),
    (2, DATE '2026-04-03', 0.00),
    (3, DATE '2026-04-02', 12.25);
