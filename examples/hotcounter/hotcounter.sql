-- The example suite's one hot table: every request adds to one of --hot-keys rows. The slot
-- column in the primary key lets --slots split each row (package counters' convention).
CREATE TABLE IF NOT EXISTS hot_counters (
    id     integer  NOT NULL,
    slot   smallint NOT NULL DEFAULT 0,
    hits   bigint   NOT NULL DEFAULT 0,
    amount bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (id, slot)
);
