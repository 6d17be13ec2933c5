-- Package counters' own tables, for whatever hot tables a suite declares: the outbox its
-- outbox mode defers deltas to, the claim table of suites whose writes have no unique row of
-- their own, and the opening values of the hot rows, read back after every seed.

-- The outbox: one row per delta, claimed (FOR UPDATE SKIP LOCKED), aggregated per hot row and
-- applied by the flush loop. A delta is its row (table_name, row_key: the key columns' values
-- as counters.Key.Row joins them, slot), the columns it writes (bit i: the table's declared
-- column i) and their values as text, in column order; request_index and position order it
-- among the requests' writes (the later one wins a last-write-wins column).
CREATE TABLE IF NOT EXISTS counter_outbox (
    id            bigserial PRIMARY KEY,
    request_index bigint   NOT NULL,
    position      integer  NOT NULL,
    table_name    text     NOT NULL,
    row_key       text     NOT NULL,
    slot          smallint NOT NULL DEFAULT 0,
    columns       bigint   NOT NULL,
    vals          text[]   NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    processed_at  timestamptz
);

CREATE INDEX IF NOT EXISTS counter_outbox_pending
    ON counter_outbox (id) WHERE processed_at IS NULL;

-- Claims: one row per part of a request that a writing transaction applied
-- (counters.ClaimParts), for suites whose writes leave no row of their own to claim by.
CREATE TABLE IF NOT EXISTS counter_claims (
    request_index bigint  NOT NULL,
    part          integer NOT NULL,
    CONSTRAINT counter_claims_pkey PRIMARY KEY (request_index, part)
);

-- Openings: every logical row of each declared hot table as the seed left it (its key
-- columns and its declared columns as text, NULL where NULL), which verification adds the
-- requests' deltas to. Written by the seed, in the run's schema, so any process can verify.
CREATE TABLE IF NOT EXISTS counter_openings (
    table_name text   NOT NULL,
    key_values text[] NOT NULL,
    vals       text[] NOT NULL
);
