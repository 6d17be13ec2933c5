-- Exactly-once guard for batched auxiliary counter writes (usage_aux_counter_hotspot_baseline,
-- async modes). The aux counters have no row per request, so a batch retried after a COMMIT
-- whose outcome was unknown would count its requests again. Each batch therefore inserts one
-- row per source record it applies — (request, kind): a request makes one record per kind —
-- in its own transaction, ON CONFLICT DO NOTHING RETURNING, and applies only the records that
-- came back new. Keys per source record, not per batch, stay exact when the queue re-batches
-- (one-by-one fallback after failed retries, inline writes when full).
CREATE TABLE IF NOT EXISTS aux_applied_records (
    request_index bigint NOT NULL,
    kind          text   NOT NULL,
    CONSTRAINT aux_applied_records_pkey PRIMARY KEY (request_index, kind)
);
