-- Settlement (usage_settlement_hotspot_baseline): the per-request settlement snapshot whose
-- unique request_id makes settling idempotent.

CREATE TABLE IF NOT EXISTS usage_settlement_snapshots (
    request_id  text PRIMARY KEY,
    user_id     text NOT NULL,
    api_key_id  text NOT NULL,
    provider_id text NOT NULL,
    cost        numeric(20, 8) NOT NULL,
    settled_at  timestamptz NOT NULL DEFAULT now()
);
