-- Wallets (MySQL and MariaDB: see sql/002_wallets.sql and mysql/001_core.sql): the balance
-- each settled usage debits.

CREATE TABLE IF NOT EXISTS wallets (
    user_id    VARCHAR(255)   NOT NULL,
    slot       SMALLINT       NOT NULL DEFAULT 0,
    balance    DECIMAL(20, 8) NOT NULL DEFAULT 0,
    updated_at DATETIME(6),
    PRIMARY KEY (user_id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The logical wallet: its balance summed over its slots.
CREATE OR REPLACE VIEW wallets_totals AS
    SELECT user_id, SUM(balance) AS balance, COUNT(*) AS slots FROM wallets GROUP BY user_id;
