-- The usage-counter suite's sync transaction, for pgbench: one usage row, then the four hot
-- rows in the suite's lock order (api key, model, provider key, provider). Seeded by the
-- suite itself (--hot-keys 1), so the rows and their ids are the same.
\set n random(1, 9000000000000)
\set rt random(50, 149)
BEGIN;
INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
    input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
VALUES ('pgbench-' || :client_id || '-' || :n, 'user-hot-0', 'key-hot-0', 'pkey-hot-0', 'provider-hot-0',
    'model-hot-0', 10, 20, 30, 0.001, :rt, now())
ON CONFLICT (request_id) DO NOTHING;
UPDATE api_keys SET total_requests = total_requests + 1, total_tokens = total_tokens + 30,
    total_cost = total_cost + 0.001, last_used_at = GREATEST(last_used_at, now()) WHERE id = 'key-hot-0';
UPDATE global_models SET usage_count = usage_count + 1 WHERE id = 'model-hot-0';
UPDATE provider_api_keys SET request_count = request_count + 1, success_count = success_count + 1,
    total_tokens = total_tokens + 30, total_cost = total_cost + 0.001,
    total_response_time_ms = total_response_time_ms + :rt WHERE id = 'pkey-hot-0';
UPDATE providers SET monthly_used = monthly_used + 0.001, updated_at = now() WHERE id = 'provider-hot-0';
END;
