-- Auxiliary counters a gateway bumps on every request besides usage (MySQL and MariaDB: see
-- sql/003_aux.sql and mysql/001_core.sql).

CREATE TABLE IF NOT EXISTS proxy_nodes (
    id              VARCHAR(255) NOT NULL,
    slot            SMALLINT     NOT NULL DEFAULT 0,
    total_requests  BIGINT       NOT NULL DEFAULT 0,
    failed_requests BIGINT       NOT NULL DEFAULT 0,
    dns_failures    BIGINT       NOT NULL DEFAULT 0,
    stream_errors   BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS management_tokens (
    id           VARCHAR(255) NOT NULL,
    slot         SMALLINT     NOT NULL DEFAULT 0,
    usage_count  BIGINT       NOT NULL DEFAULT 0,
    last_used_at DATETIME(6),
    last_used_ip VARCHAR(64),
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The logical rows, summed over their slots, and a token's last IP is the one of its newest use,
-- whichever slot holds it.
CREATE OR REPLACE VIEW proxy_nodes_totals AS
    SELECT id, SUM(total_requests) AS total_requests, SUM(failed_requests) AS failed_requests,
           SUM(dns_failures) AS dns_failures, SUM(stream_errors) AS stream_errors, COUNT(*) AS slots
    FROM proxy_nodes GROUP BY id;

CREATE OR REPLACE VIEW management_tokens_totals AS
    SELECT t.id, SUM(t.usage_count) AS usage_count, MAX(t.last_used_at) AS last_used_at,
           (SELECT s.last_used_ip FROM management_tokens s WHERE s.id = t.id
            ORDER BY s.last_used_at IS NULL, s.last_used_at DESC LIMIT 1) AS last_used_ip,
           COUNT(*) AS slots
    FROM management_tokens t GROUP BY t.id;
