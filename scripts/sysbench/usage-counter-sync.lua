-- The usage-counter suite's sync transaction for sysbench, in MySQL's dialect: one usage row,
-- then the hot rows of its set in the suite's lock order (api key, model, provider key,
-- provider), each in the single-row form the suite sends. The tables are the suite's own,
-- seeded by it (scripts/sysbench-compare keeps a run's database for sysbench's turn), so the
-- rows and their ids are the same. --hot-keys N spreads the transactions over the N sets of
-- hot rows the suite seeded (it seeds --hot-keys sets; give the same number).

sysbench.cmdline.options = {
  ["hot-keys"] = {"sets of hot rows the suite seeded (its --hot-keys)", 1},
}

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  n = 0
end

function thread_done()
  con:disconnect()
end

function event()
  n = n + 1
  local h = sysbench.rand.uniform(0, sysbench.opt.hot_keys - 1)
  local rt = sysbench.rand.uniform(50, 149)
  con:query("BEGIN")
  con:query(string.format([[INSERT INTO `usage` (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
    input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
    VALUES ('sysbench-%d-%d', 'user-hot-%d', 'key-hot-%d', 'pkey-hot-%d', 'provider-hot-%d', 'model-hot-%d',
    10, 20, 30, 0.001, %d, UTC_TIMESTAMP(6))]], sysbench.tid, n, h, h, h, h, h, rt))
  con:query(string.format([[UPDATE api_keys AS t SET t.total_requests = t.total_requests + 1,
    t.total_tokens = t.total_tokens + 30, t.total_cost = t.total_cost + 0.001,
    t.last_used_at = COALESCE(GREATEST(t.last_used_at, UTC_TIMESTAMP(6)), t.last_used_at, UTC_TIMESTAMP(6))
    WHERE t.id = 'key-hot-%d' AND t.slot = 0]], h))
  con:query(string.format("UPDATE global_models AS t SET t.usage_count = t.usage_count + 1 WHERE t.id = 'model-hot-%d' AND t.slot = 0", h))
  con:query(string.format([[UPDATE provider_api_keys AS t SET t.request_count = t.request_count + 1,
    t.success_count = t.success_count + 1, t.total_tokens = t.total_tokens + 30, t.total_cost = t.total_cost + 0.001,
    t.total_response_time_ms = t.total_response_time_ms + %d WHERE t.id = 'pkey-hot-%d' AND t.slot = 0]], rt, h))
  con:query(string.format("UPDATE providers AS t SET t.monthly_used = t.monthly_used + 0.001, t.updated_at = UTC_TIMESTAMP(6) WHERE t.id = 'provider-hot-%d' AND t.slot = 0", h))
  con:query("COMMIT")
end
