-- Runs split over several processes (MySQL and MariaDB: sql/006_queue_producers.sql is
-- PostgreSQL's, and says what the table holds): one row per producer process of a run.
CREATE TABLE IF NOT EXISTS queue_producers (
    stream      VARCHAR(255) NOT NULL,
    producer_id INT          NOT NULL,
    first_index BIGINT       NOT NULL,
    requests    BIGINT       NOT NULL,
    started_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    finished_at DATETIME(6),
    accepted    BIGINT,
    outcomes    LONGBLOB,
    PRIMARY KEY (stream, producer_id),
    CONSTRAINT queue_producers_outcomes CHECK (outcomes IS NULL OR LENGTH(outcomes) = requests)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
