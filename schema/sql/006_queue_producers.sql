-- Runs split over several processes (testkit/redisrun). The Redis backend's own table of applied
-- entry ids is queue/redisq's: a consuming process creates it (redisq.AppliedTableSQL).
--
-- queue_producers: one row per producer process of a run (--role producer). A producer
-- registers before its load and, once every record it offered has an answer, records the
-- outcome of each of its requests (one byte per request, the load engine's outcome code:
-- 1 succeeded, 2 failed, 3 outcome unknown, 0 not attempted) and marks itself finished.
-- Request i of the producer is run-wide request first_index + i. Consumers know the run is
-- over when every expected producer has finished and the stream holds no entry; the verifying
-- consumer checks the database against these outcomes and needs no other input.
CREATE TABLE IF NOT EXISTS queue_producers (
    stream      text        NOT NULL,
    producer_id integer     NOT NULL,
    first_index bigint      NOT NULL,
    requests    bigint      NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    accepted    bigint,
    outcomes    bytea,
    CONSTRAINT queue_producers_pkey PRIMARY KEY (stream, producer_id),
    CONSTRAINT queue_producers_outcomes CHECK (outcomes IS NULL OR length(outcomes) = requests)
);
