-- The built-in usage counter suite's request (usage_counter_hotspot_baseline) as a script,
-- over the same tables: one usage row (10 + 20 tokens, cost 0.001), then the counters of its
-- api key, model, provider key and provider, in the suite's order. Request i uses hot set
-- i % hot_keys, as the suite's --hot-keys does. Tables and hot rows: usage-counter-init.sql.
-- Variables: hot_keys. :request_id is the kit's request index, unique in a run.
--
-- Where it differs from the suite: the ids are the request's index and the hot set's number
-- (the suite writes 'req-7' and 'key-hot-0'; the kit evaluates keys exactly, string
-- concatenation it does not), and the times are the server's now() when the write lands.
\set hot :request_id % :hot_keys
\set rt 50 + :request_id % 100
BEGIN;
INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
    input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
    VALUES (:request_id, :hot, :hot, :hot, :hot, :hot, 10, 20, 30, 0.001, :rt, now());
UPDATE api_keys SET total_requests = total_requests + 1, total_tokens = total_tokens + 30,
    total_cost = total_cost + 0.001, last_used_at = greatest(last_used_at, now())
    WHERE id = :hot::text AND slot = 0;
UPDATE global_models SET usage_count = usage_count + 1 WHERE id = :hot::text AND slot = 0;
UPDATE provider_api_keys SET request_count = request_count + 1, success_count = success_count + 1,
    total_tokens = total_tokens + 30, total_cost = total_cost + 0.001,
    total_response_time_ms = total_response_time_ms + :rt
    WHERE id = :hot::text AND slot = 0;
UPDATE providers SET monthly_used = monthly_used + 0.001, updated_at = now() WHERE id = :hot::text AND slot = 0;
END;
