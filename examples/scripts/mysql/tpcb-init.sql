-- The tables of mysql/tpcb-like.sql in MySQL's SQL (MariaDB 10.6+, MySQL 8): pgbench -i's
-- columns, rows and primary keys on InnoDB (pgbench_history has none; InnoDB keys it with a
-- hidden row id). pgbench's fillfactor has no InnoDB equivalent.
-- Variables: scale (up to 10000).
--
-- The rows are numbered by a join of a 1000-row recursive CTE with itself, not one
-- recursive CTE: MySQL stops a recursion at 1000 rows (cte_max_recursion_depth) and
-- MariaDB's limit is another variable (max_recursive_iterations).

CREATE TABLE pgbench_history (tid INT, bid INT, aid INT, delta INT, mtime DATETIME(6), filler CHAR(22)) ENGINE = InnoDB;
CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84)) ENGINE = InnoDB;
CREATE TABLE pgbench_accounts (aid INT NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84)) ENGINE = InnoDB;
CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88)) ENGINE = InnoDB;

-- 1 branch, 10 tellers and 100000 accounts per unit of scale; branches' and tellers'
-- filler is NULL, accounts' blank, as pgbench writes them.
INSERT INTO pgbench_branches (bid, bbalance)
    WITH RECURSIVE k (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 999)
    SELECT 1 + a.n + 1000 * b.n, 0 FROM k a JOIN k b ON b.n <= (:scale - 1) DIV 1000
    WHERE 1 + a.n + 1000 * b.n <= :scale;
INSERT INTO pgbench_tellers (tid, bid, tbalance)
    WITH RECURSIVE k (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 999)
    SELECT 1 + a.n + 1000 * b.n, (a.n + 1000 * b.n) DIV 10 + 1, 0 FROM k a JOIN k b ON b.n <= (10 * :scale - 1) DIV 1000
    WHERE 1 + a.n + 1000 * b.n <= 10 * :scale;
INSERT INTO pgbench_accounts (aid, bid, abalance, filler)
    WITH RECURSIVE k (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 999)
    SELECT 1 + a.n + 1000 * b.n + 1000000 * c.n, (a.n + 1000 * b.n + 1000000 * c.n) DIV 100000 + 1, 0, ''
    FROM k a JOIN k b ON b.n <= LEAST(999, (100000 * :scale - 1) DIV 1000) JOIN k c ON c.n <= (100000 * :scale - 1) DIV 1000000
    WHERE 1 + a.n + 1000 * b.n + 1000000 * c.n <= 100000 * :scale;

ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history;
