-- Wallets: the balance each settled usage debits (a counters row kind, so shared).

CREATE TABLE IF NOT EXISTS wallets (
    user_id    text PRIMARY KEY,
    balance    numeric(20, 8) NOT NULL DEFAULT 0,
    updated_at timestamptz
);
