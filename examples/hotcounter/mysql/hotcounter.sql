-- The example suite's one hot table on MySQL and MariaDB (see ../hotcounter.sql).
CREATE TABLE IF NOT EXISTS hot_counters (
    id     INT      NOT NULL,
    slot   SMALLINT NOT NULL DEFAULT 0,
    hits   BIGINT   NOT NULL DEFAULT 0,
    amount BIGINT   NOT NULL DEFAULT 0,
    PRIMARY KEY (id, slot)
) ENGINE = InnoDB;
