-- Request candidates: one row per slot — (request_id, candidate_index, retry_index) — that a
-- gateway dispatches, written as the candidate walks pending → streaming → success | failed |
-- cancelled. Writers upsert on the slot and guard the order themselves (a stored terminal
-- status is never overwritten by a late non-terminal write, streaming never by pending), so
-- the final row does not depend on the order in which the writes land.
--
-- The slot is the key: no surrogate id, so a row costs one index entry and no sequence call.

CREATE TABLE IF NOT EXISTS request_candidates (
    request_id      text        NOT NULL,
    candidate_index integer     NOT NULL,
    retry_index     integer     NOT NULL,
    status          text        NOT NULL,
    provider_id     text,
    provider_key_id text,
    endpoint_id     text,
    status_code     integer,
    error_type      text,
    error_message   text,
    latency_ms      integer,
    first_byte_ms   integer,
    extra_data      jsonb       NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL,
    started_at      timestamptz,
    finished_at     timestamptz,
    CONSTRAINT request_candidates_slot PRIMARY KEY (request_id, candidate_index, retry_index),
    CONSTRAINT request_candidates_status
        CHECK (status IN ('pending', 'streaming', 'success', 'failed', 'cancelled'))
);
