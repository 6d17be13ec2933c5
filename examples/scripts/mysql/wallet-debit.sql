-- wallet-debit in MySQL's SQL: debit one wallet and append its ledger row. Wallets are
-- drawn with a zipfian skew (theta = 0.99 is YCSB's), so a few wallets take most of the
-- debits. Tables: mysql/wallet-init.sql. Variables: wallets, theta. :request_id is the
-- kit's request index, unique in a run.
\set wallet random_zipfian(1, :wallets, :theta)
\set amount random(1, 1000)
START TRANSACTION;
UPDATE wallet_accounts SET balance = balance - :amount WHERE id = :wallet;
INSERT INTO wallet_ledger (request_id, wallet_id, debit, created_at) VALUES (:request_id, :wallet, :amount, NOW(6));
COMMIT;
