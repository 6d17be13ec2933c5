-- A job queue on a table, leased: producers insert jobs; workers claim a batch of available
-- ones (ordered by priority, then run time) with FOR UPDATE SKIP LOCKED, which sets their lease;
-- a worker renews the lease of a job that outlives it and completes the job in the end: kept
-- (state completed), deleted, or moved to jobs_archive. A lease that ran out (its worker died)
-- is handed back by the lease reaper, and the job is claimed and run again (attempt counts the
-- claims).
--
-- The id is the request that inserted the job (no sequence): an insert retried after a COMMIT
-- whose outcome was lost finds its job there (ON CONFLICT DO NOTHING). args carries what River's
-- river_job.args carries in the river mode, so that a row holds the same payload in both.

CREATE TABLE IF NOT EXISTS jobs (
    id           bigint      PRIMARY KEY,
    state        text        NOT NULL DEFAULT 'available',
    priority     smallint    NOT NULL,
    run_at       timestamptz NOT NULL DEFAULT now(),
    attempt      integer     NOT NULL DEFAULT 0,
    lease_until  timestamptz,
    completions  integer     NOT NULL DEFAULT 0,
    args         jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    claimed_at   timestamptz,
    completed_at timestamptz,
    CONSTRAINT jobs_state CHECK (state IN ('available', 'running', 'completed'))
);

-- What a claim reads, in the order it takes jobs; a job leaves it when claimed.
CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs (priority, run_at, id) WHERE state = 'available';
-- What the lease reaper reads.
CREATE INDEX IF NOT EXISTS jobs_leased ON jobs (lease_until) WHERE state = 'running';

-- Completed jobs under --on-complete archive (as pgmq archives its messages). No key on id, so
-- that a job archived twice would show in the verification instead of failing a batch.
CREATE TABLE IF NOT EXISTS jobs_archive (
    LIKE jobs INCLUDING DEFAULTS,
    archived_at timestamptz NOT NULL DEFAULT now()
);
