-- The job queue on MySQL and MariaDB: ../jobs.sql is PostgreSQL's, and says what the tables hold.
-- The times are DATETIME(6) in UTC, written by the statements (UTC_TIMESTAMP(6)); args is JSON (on
-- MariaDB a LONGTEXT that must hold valid JSON). InnoDB has no partial index: the claim's and the
-- reaper's indexes lead with the state instead, and a job moves between their ranges as its state
-- changes.

CREATE TABLE IF NOT EXISTS jobs (
    id           BIGINT       NOT NULL,
    state        VARCHAR(16)  NOT NULL DEFAULT 'available',
    priority     SMALLINT     NOT NULL,
    run_at       DATETIME(6)  NOT NULL,
    attempt      INT          NOT NULL DEFAULT 0,
    lease_until  DATETIME(6),
    completions  INT          NOT NULL DEFAULT 0,
    args         JSON         NOT NULL,
    created_at   DATETIME(6)  NOT NULL,
    claimed_at   DATETIME(6),
    completed_at DATETIME(6),
    PRIMARY KEY (id),
    -- What a claim reads, in the order it takes jobs.
    KEY jobs_claimable (state, priority, run_at, id),
    -- What the lease reaper reads.
    KEY jobs_leased (state, lease_until),
    CONSTRAINT jobs_state CHECK (state IN ('available', 'running', 'completed'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Completed jobs under --on-complete archive. No key on id (InnoDB keys the rows itself), so that
-- a job archived twice would show in the verification instead of failing a batch.
CREATE TABLE IF NOT EXISTS jobs_archive (
    id           BIGINT       NOT NULL,
    state        VARCHAR(16)  NOT NULL,
    priority     SMALLINT     NOT NULL,
    run_at       DATETIME(6)  NOT NULL,
    attempt      INT          NOT NULL,
    lease_until  DATETIME(6),
    completions  INT          NOT NULL,
    args         JSON         NOT NULL,
    created_at   DATETIME(6)  NOT NULL,
    claimed_at   DATETIME(6),
    completed_at DATETIME(6),
    archived_at  DATETIME(6)  NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
