-- Settlement (usage_settlement_hotspot_baseline) on MySQL and MariaDB: the per-request
-- settlement snapshot whose unique request_id makes settling idempotent (see
-- ../settlement_snapshots.sql).

CREATE TABLE IF NOT EXISTS usage_settlement_snapshots (
    request_id  VARCHAR(255)   NOT NULL PRIMARY KEY,
    user_id     VARCHAR(255)   NOT NULL,
    api_key_id  VARCHAR(255)   NOT NULL,
    provider_id VARCHAR(255)   NOT NULL,
    cost        DECIMAL(20, 8) NOT NULL,
    settled_at  DATETIME(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
