-- Request candidates on MySQL and MariaDB: ../request_candidates.sql is PostgreSQL's, and says
-- what the table holds and why the slot is its key. The texts compare by their bytes
-- (utf8mb4_bin), as PostgreSQL's do by default; the times are DATETIME(6) in UTC; extra_data is
-- JSON (on MariaDB a LONGTEXT that must hold valid JSON).

CREATE TABLE IF NOT EXISTS request_candidates (
    request_id      VARCHAR(64)  NOT NULL,
    candidate_index INT          NOT NULL,
    retry_index     INT          NOT NULL,
    status          VARCHAR(16)  NOT NULL,
    provider_id     VARCHAR(255),
    provider_key_id VARCHAR(255),
    endpoint_id     VARCHAR(255),
    status_code     INT,
    error_type      VARCHAR(255),
    error_message   TEXT,
    latency_ms      INT,
    first_byte_ms   INT,
    extra_data      JSON         NOT NULL DEFAULT ('{}'),
    created_at      DATETIME(6)  NOT NULL,
    started_at      DATETIME(6),
    finished_at     DATETIME(6),
    CONSTRAINT request_candidates_slot PRIMARY KEY (request_id, candidate_index, retry_index),
    CONSTRAINT request_candidates_status
        CHECK (status IN ('pending', 'streaming', 'success', 'failed', 'cancelled'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
