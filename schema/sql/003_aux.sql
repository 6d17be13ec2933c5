-- Auxiliary counters a gateway bumps on every request besides usage.

CREATE TABLE IF NOT EXISTS proxy_nodes (
    id              text NOT NULL,
    slot            smallint NOT NULL DEFAULT 0, -- see 001_core.sql
    total_requests  bigint NOT NULL DEFAULT 0,
    failed_requests bigint NOT NULL DEFAULT 0,
    dns_failures    bigint NOT NULL DEFAULT 0,
    stream_errors   bigint NOT NULL DEFAULT 0,
    CONSTRAINT proxy_nodes_pkey PRIMARY KEY (id, slot)
);

CREATE TABLE IF NOT EXISTS management_tokens (
    id           text NOT NULL,
    slot         smallint NOT NULL DEFAULT 0, -- see 001_core.sql
    usage_count  bigint NOT NULL DEFAULT 0,
    last_used_at timestamptz,
    last_used_ip text,
    CONSTRAINT management_tokens_pkey PRIMARY KEY (id, slot)
);

-- The logical rows, summed over their slots (see 001_core.sql); a token's last IP is the one of
-- its newest use, whichever slot holds it.
CREATE OR REPLACE VIEW proxy_nodes_totals AS
    SELECT id, sum(total_requests) AS total_requests, sum(failed_requests) AS failed_requests,
           sum(dns_failures) AS dns_failures, sum(stream_errors) AS stream_errors, count(*) AS slots
    FROM proxy_nodes GROUP BY id;

CREATE OR REPLACE VIEW management_tokens_totals AS
    SELECT id, sum(usage_count) AS usage_count, max(last_used_at) AS last_used_at,
           (array_agg(last_used_ip ORDER BY last_used_at DESC NULLS LAST))[1] AS last_used_ip,
           count(*) AS slots
    FROM management_tokens GROUP BY id;
