-- The tables of pgbench's tpcb-like and simple-update scripts, as `pgbench -i -s :scale`
-- makes them with its defaults: the same columns, fillfactor, rows and primary keys.
-- Variables: scale (pgbench's -s; below 20000, where pgbench switches aid to bigint).
-- Unlike pgbench -i, nothing is dropped first: the run's schema is new.

CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)) WITH (fillfactor = 100);
CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)) WITH (fillfactor = 100);
CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)) WITH (fillfactor = 100);

-- 1 branch, 10 tellers and 100000 accounts per unit of scale; branches' and tellers'
-- filler is NULL, accounts' blank, as pgbench writes them.
INSERT INTO pgbench_branches (bid, bbalance)
    SELECT bid, 0 FROM generate_series(1, :scale) AS bid;
INSERT INTO pgbench_tellers (tid, bid, tbalance)
    SELECT tid, (tid - 1) / 10 + 1, 0 FROM generate_series(1, 10 * :scale) AS tid;
INSERT INTO pgbench_accounts (aid, bid, abalance, filler)
    SELECT aid, (aid - 1) / 100000 + 1, 0, '' FROM generate_series(1, 100000 * :scale) AS aid;

VACUUM ANALYZE pgbench_branches;
VACUUM ANALYZE pgbench_tellers;
VACUUM ANALYZE pgbench_accounts;
VACUUM ANALYZE pgbench_history;

ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid);
