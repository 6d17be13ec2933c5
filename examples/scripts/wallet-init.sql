-- The tables of wallet-debit.sql. Variables: wallets (how many).
--
-- No CHECK (balance >= 0): a check on the debited column would make the debit impossible to
-- defer (see inventory-decrement.sql). No foreign key from the ledger either: it would keep
-- wallet_accounts from being split into slots (--slots).
CREATE TABLE wallet_accounts (
    id      bigint PRIMARY KEY,
    balance bigint NOT NULL
);

INSERT INTO wallet_accounts (id, balance)
    SELECT id, 1000000 FROM generate_series(1, :wallets) AS id;

-- One row per request, keyed by the request's index: the key makes the row its request's
-- claim, so a retried or redelivered write lands once.
CREATE TABLE wallet_ledger (
    request_id bigint PRIMARY KEY,
    wallet_id  bigint NOT NULL,
    debit      bigint NOT NULL,
    created_at timestamptz NOT NULL
);
