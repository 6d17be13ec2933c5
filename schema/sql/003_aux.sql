-- Auxiliary counters a gateway bumps on every request besides usage.

CREATE TABLE IF NOT EXISTS proxy_nodes (
    id              text PRIMARY KEY,
    total_requests  bigint NOT NULL DEFAULT 0,
    failed_requests bigint NOT NULL DEFAULT 0,
    dns_failures    bigint NOT NULL DEFAULT 0,
    stream_errors   bigint NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS management_tokens (
    id           text PRIMARY KEY,
    usage_count  bigint NOT NULL DEFAULT 0,
    last_used_at timestamptz,
    last_used_ip text
);
