-- Core gateway tables (MySQL and MariaDB: sql/001_core.sql is PostgreSQL's, and says what
-- each table is): the hot rows that usage accounting updates, and the usage log. Every
-- statement is idempotent and creates its table in the run's database. Text is utf8mb4,
-- compared by its bytes (utf8mb4_bin, as the kit compares keys), an amount a DECIMAL with 8
-- places, a time a DATETIME(6) holding UTC.
--
-- Every hot counter table has a slot column and the key (id, slot): a logical row is one
-- physical row per slot (--slots N: slots 1..N, unslotted: the one row of slot 0), a write
-- adds to one slot and a read sums them (package counters).

CREATE TABLE IF NOT EXISTS users (
    id         VARCHAR(255) NOT NULL PRIMARY KEY,
    name       VARCHAR(255) NOT NULL,
    created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS providers (
    id           VARCHAR(255)   NOT NULL,
    slot         SMALLINT       NOT NULL DEFAULT 0,
    name         VARCHAR(255)   NOT NULL,
    monthly_used DECIMAL(20, 8) NOT NULL DEFAULT 0,
    updated_at   DATETIME(6),
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS api_keys (
    id             VARCHAR(255)   NOT NULL,
    slot           SMALLINT       NOT NULL DEFAULT 0,
    user_id        VARCHAR(255)   NOT NULL,
    total_requests BIGINT         NOT NULL DEFAULT 0,
    total_tokens   BIGINT         NOT NULL DEFAULT 0,
    total_cost     DECIMAL(20, 8) NOT NULL DEFAULT 0,
    quota_used     DECIMAL(20, 8) NOT NULL DEFAULT 0,
    last_used_at   DATETIME(6),
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS provider_api_keys (
    id                     VARCHAR(255)   NOT NULL,
    slot                   SMALLINT       NOT NULL DEFAULT 0,
    provider_id            VARCHAR(255)   NOT NULL,
    request_count          BIGINT         NOT NULL DEFAULT 0,
    success_count          BIGINT         NOT NULL DEFAULT 0,
    error_count            BIGINT         NOT NULL DEFAULT 0,
    total_tokens           BIGINT         NOT NULL DEFAULT 0,
    total_cost             DECIMAL(20, 8) NOT NULL DEFAULT 0,
    total_response_time_ms BIGINT         NOT NULL DEFAULT 0,
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS global_models (
    id          VARCHAR(255) NOT NULL,
    slot        SMALLINT     NOT NULL DEFAULT 0,
    name        VARCHAR(255) NOT NULL,
    usage_count BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- request_id is the key: no surrogate id, so a usage row costs one index entry. USAGE is a
-- reserved word in MySQL: the table's name is quoted wherever it is used.
CREATE TABLE IF NOT EXISTS `usage` (
    request_id          VARCHAR(255)   NOT NULL PRIMARY KEY,
    user_id             VARCHAR(255)   NOT NULL,
    api_key_id          VARCHAR(255)   NOT NULL,
    provider_api_key_id VARCHAR(255)   NOT NULL,
    provider_id         VARCHAR(255)   NOT NULL,
    model_id            VARCHAR(255)   NOT NULL,
    input_tokens        INT            NOT NULL,
    output_tokens       INT            NOT NULL,
    total_tokens        INT            NOT NULL,
    cost                DECIMAL(20, 8) NOT NULL,
    response_time_ms    INT            NOT NULL DEFAULT 0,
    status              VARCHAR(32)    NOT NULL DEFAULT 'success',
    billing_status      VARCHAR(32)    NOT NULL DEFAULT 'pending',
    created_at          DATETIME(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    finalized_at        DATETIME(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The logical hot rows: each counter summed over its slots, timestamps at their newest. Reads
-- and verification go through these: with one slot per row they are the table itself.
CREATE OR REPLACE VIEW api_keys_totals AS
    SELECT id, MIN(user_id) AS user_id, SUM(total_requests) AS total_requests,
           SUM(total_tokens) AS total_tokens, SUM(total_cost) AS total_cost,
           SUM(quota_used) AS quota_used, MAX(last_used_at) AS last_used_at, COUNT(*) AS slots
    FROM api_keys GROUP BY id;

CREATE OR REPLACE VIEW provider_api_keys_totals AS
    SELECT id, SUM(request_count) AS request_count, SUM(success_count) AS success_count,
           SUM(error_count) AS error_count, SUM(total_tokens) AS total_tokens,
           SUM(total_cost) AS total_cost, SUM(total_response_time_ms) AS total_response_time_ms,
           COUNT(*) AS slots
    FROM provider_api_keys GROUP BY id;

CREATE OR REPLACE VIEW global_models_totals AS
    SELECT id, SUM(usage_count) AS usage_count, COUNT(*) AS slots FROM global_models GROUP BY id;

CREATE OR REPLACE VIEW providers_totals AS
    SELECT id, SUM(monthly_used) AS monthly_used, COUNT(*) AS slots FROM providers GROUP BY id;
