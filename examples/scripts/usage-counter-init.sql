-- The tables of usage-counter.sql: those the built-in usage counter suite writes, as the kit
-- defines them, and its hot rows. Variables: hot_keys (the suite's --hot-keys).
--
-- A hot set's rows are keyed by its number ('0', '1', ...), which the script computes;
-- slot 0 is the row of a table not split into slots. IF NOT EXISTS: in a schema that already
-- holds the kit's own gateway tables, the seed goes into them.

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

-- One row per request, keyed by the request's index: the key makes the row its request's
-- claim.
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

INSERT INTO api_keys (id, user_id)
    SELECT h::text, h::text FROM generate_series(0, :hot_keys - 1) AS h;
INSERT INTO providers (id, name)
    SELECT h::text, 'provider ' || h FROM generate_series(0, :hot_keys - 1) AS h;
INSERT INTO provider_api_keys (id, provider_id)
    SELECT h::text, h::text FROM generate_series(0, :hot_keys - 1) AS h;
INSERT INTO global_models (id, name)
    SELECT h::text, 'gpt-5' FROM generate_series(0, :hot_keys - 1) AS h;
