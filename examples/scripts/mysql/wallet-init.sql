-- The tables of mysql/wallet-debit.sql in MySQL's SQL (MariaDB 10.6+, MySQL 8).
-- Variables: wallets (how many, up to 1000000).
--
-- No CHECK (balance >= 0) and a signed balance (an UNSIGNED one acts as that check): a
-- check on the debited column would make the debit impossible to defer. No foreign key
-- from the ledger either: it would keep wallet_accounts from being split into slots.
CREATE TABLE wallet_accounts (
    id      BIGINT PRIMARY KEY,
    balance BIGINT NOT NULL
) ENGINE = InnoDB;

INSERT INTO wallet_accounts (id, balance)
    WITH RECURSIVE k (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 999)
    SELECT 1 + a.n + 1000 * b.n, 1000000 FROM k a JOIN k b ON b.n <= (:wallets - 1) DIV 1000
    WHERE 1 + a.n + 1000 * b.n <= :wallets;

-- One row per request, keyed by the request's index: the key makes the row its request's
-- claim, so a retried or redelivered write lands once.
CREATE TABLE wallet_ledger (
    request_id BIGINT PRIMARY KEY,
    wallet_id  BIGINT NOT NULL,
    debit      BIGINT NOT NULL,
    created_at DATETIME(6) NOT NULL
) ENGINE = InnoDB;
