-- tpcb-like with skewed accounts: pgbench's TPC-B transaction, the account drawn with a
-- zipfian skew of exponent :theta instead of uniformly (YCSB's standard is 0.99; pgbench itself
-- takes 1.001 and above only), so a few accounts take most of the writes, as a few customers
-- do in production. Tables: tpcb-init.sql. Variables: scale, theta.
\set aid random_zipfian(1, 100000 * :scale, :theta)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
