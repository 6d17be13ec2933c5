-- The example suite's one hot table: every request adds to one of --hot-keys rows.
CREATE TABLE IF NOT EXISTS hot_counters (
    id     integer PRIMARY KEY,
    hits   bigint  NOT NULL DEFAULT 0,
    amount bigint  NOT NULL DEFAULT 0
);
