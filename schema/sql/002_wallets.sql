-- Wallets: the balance each settled usage debits (a counters row kind, so shared).

CREATE TABLE IF NOT EXISTS wallets (
    user_id    text NOT NULL,
    slot       smallint NOT NULL DEFAULT 0, -- see 001_core.sql
    balance    numeric(20, 8) NOT NULL DEFAULT 0,
    updated_at timestamptz,
    CONSTRAINT wallets_pkey PRIMARY KEY (user_id, slot)
);

-- The logical wallet: its balance summed over its slots (see 001_core.sql).
CREATE OR REPLACE VIEW wallets_totals AS
    SELECT user_id, sum(balance) AS balance, count(*) AS slots FROM wallets GROUP BY user_id;
