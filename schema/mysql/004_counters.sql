-- Package counters' own tables (MySQL and MariaDB: sql/004_counters.sql is PostgreSQL's, and
-- says what each one is): the outbox, the claims and the openings of the hot rows. A row is
-- named by its table and its row_key (counters.Key.Row: the key columns' texts, joined), and
-- values are a JSON array of texts, in the table's declared column order.

-- The outbox: one row per delta, claimed (FOR UPDATE SKIP LOCKED), aggregated per hot row and
-- applied by the flush loop. MySQL has no partial index: the pending rows are those of
-- processed_at NULL in (processed_at, id), read in id order.
CREATE TABLE IF NOT EXISTS counter_outbox (
    id            BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    request_index BIGINT       NOT NULL,
    `position`    INT          NOT NULL,
    table_name    VARCHAR(64)  NOT NULL,
    row_key       VARCHAR(512) NOT NULL,
    slot          SMALLINT     NOT NULL DEFAULT 0,
    `columns`     BIGINT       NOT NULL,
    vals          LONGTEXT     NOT NULL,
    created_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    processed_at  DATETIME(6),
    KEY counter_outbox_pending (processed_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Claims: one row per part of a request that a writing transaction applied.
CREATE TABLE IF NOT EXISTS counter_claims (
    request_index BIGINT NOT NULL,
    part          INT    NOT NULL,
    PRIMARY KEY (request_index, part)
) ENGINE = InnoDB;

-- Openings: every logical row of each declared hot table as the seed left it, which
-- verification adds the requests' deltas to.
CREATE TABLE IF NOT EXISTS counter_openings (
    table_name VARCHAR(64)  NOT NULL,
    row_key    VARCHAR(512) NOT NULL,
    vals       LONGTEXT     NOT NULL,
    PRIMARY KEY (table_name, row_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
