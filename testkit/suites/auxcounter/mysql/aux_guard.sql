-- Exactly-once guard for the auxiliary counter writes on MySQL and MariaDB (see
-- ../aux_guard.sql): one row per source record a transaction applied, (request, kind).
CREATE TABLE IF NOT EXISTS aux_applied_records (
    request_index BIGINT      NOT NULL,
    kind          VARCHAR(32) NOT NULL,
    PRIMARY KEY (request_index, kind)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
