-- Core gateway tables: the hot rows that usage accounting updates, and the usage log.
-- Every statement is idempotent; the run's schema is first on search_path.
--
-- Every hot counter table has a slot column and the key (id, slot): a logical row is one
-- physical row per slot (--slots N: slots 1..N; unslotted: the one row of slot 0), a write
-- adds to one slot and a read sums them (package counters).

CREATE TABLE IF NOT EXISTS users (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS providers (
    id           text NOT NULL,
    slot         smallint NOT NULL DEFAULT 0,
    name         text NOT NULL,
    monthly_used numeric(20, 8) NOT NULL DEFAULT 0,
    updated_at   timestamptz,
    CONSTRAINT providers_pkey PRIMARY KEY (id, slot)
);

CREATE TABLE IF NOT EXISTS api_keys (
    id             text NOT NULL,
    slot           smallint NOT NULL DEFAULT 0,
    user_id        text NOT NULL,
    total_requests bigint NOT NULL DEFAULT 0,
    total_tokens   bigint NOT NULL DEFAULT 0,
    total_cost     numeric(20, 8) NOT NULL DEFAULT 0,
    quota_used     numeric(20, 8) NOT NULL DEFAULT 0,
    last_used_at   timestamptz,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id, slot)
);

CREATE TABLE IF NOT EXISTS provider_api_keys (
    id                     text NOT NULL,
    slot                   smallint NOT NULL DEFAULT 0,
    provider_id            text NOT NULL,
    request_count          bigint NOT NULL DEFAULT 0,
    success_count          bigint NOT NULL DEFAULT 0,
    error_count            bigint NOT NULL DEFAULT 0,
    total_tokens           bigint NOT NULL DEFAULT 0,
    total_cost             numeric(20, 8) NOT NULL DEFAULT 0,
    total_response_time_ms bigint NOT NULL DEFAULT 0,
    CONSTRAINT provider_api_keys_pkey PRIMARY KEY (id, slot)
);

CREATE TABLE IF NOT EXISTS global_models (
    id          text NOT NULL,
    slot        smallint NOT NULL DEFAULT 0,
    name        text NOT NULL,
    usage_count bigint NOT NULL DEFAULT 0,
    CONSTRAINT global_models_pkey PRIMARY KEY (id, slot)
);

-- request_id is the key: no surrogate id, so a usage row costs one index entry and no
-- sequence call (the async flush COPYs thousands of them per batch).
CREATE TABLE IF NOT EXISTS usage (
    request_id          text PRIMARY KEY,
    user_id             text NOT NULL,
    api_key_id          text NOT NULL,
    provider_api_key_id text NOT NULL,
    provider_id         text NOT NULL,
    model_id            text NOT NULL,
    input_tokens        integer NOT NULL,
    output_tokens       integer NOT NULL,
    total_tokens        integer NOT NULL,
    cost                numeric(20, 8) NOT NULL,
    response_time_ms    integer NOT NULL DEFAULT 0,
    status              text NOT NULL DEFAULT 'success',
    billing_status      text NOT NULL DEFAULT 'pending',
    created_at          timestamptz NOT NULL DEFAULT now(),
    finalized_at        timestamptz
);

-- The logical hot rows: each counter summed over its slots, timestamps at their newest. Reads
-- and verification go through these; with one slot per row they are the table itself.
CREATE OR REPLACE VIEW api_keys_totals AS
    SELECT id, min(user_id) AS user_id, sum(total_requests) AS total_requests,
           sum(total_tokens) AS total_tokens, sum(total_cost) AS total_cost,
           sum(quota_used) AS quota_used, max(last_used_at) AS last_used_at, count(*) AS slots
    FROM api_keys GROUP BY id;

CREATE OR REPLACE VIEW provider_api_keys_totals AS
    SELECT id, sum(request_count) AS request_count, sum(success_count) AS success_count,
           sum(error_count) AS error_count, sum(total_tokens) AS total_tokens,
           sum(total_cost) AS total_cost, sum(total_response_time_ms) AS total_response_time_ms,
           count(*) AS slots
    FROM provider_api_keys GROUP BY id;

CREATE OR REPLACE VIEW global_models_totals AS
    SELECT id, sum(usage_count) AS usage_count, count(*) AS slots FROM global_models GROUP BY id;

CREATE OR REPLACE VIEW providers_totals AS
    SELECT id, sum(monthly_used) AS monthly_used, count(*) AS slots FROM providers GROUP BY id;
