// Package gateway declares the API gateway's hot counter tables (package schema's
// 001_core.sql, 002_wallets.sql, 003_aux.sql) for package counters: each table's key, the
// columns a new slot copies, and how each counter column takes a delta. It is the one Go
// declaration of them the counter suites share; which columns a request writes is each suite's.
package gateway

import "github.com/hotspotkit/hotspotkit/testkit/counters"

// id is the text key of every gateway hot table but wallets.
var id = []counters.Column{{Name: "id", Type: "text"}}

func add(name, typ string) counters.Column {
	return counters.Column{Name: name, Type: typ, Op: counters.Add}
}

// The hot tables.
var (
	// APIKeys are the api keys: usage totals, the quota used and the newest use.
	APIKeys = counters.MustTable(counters.TableSpec{Name: "api_keys", Key: id, Slotted: true, SlotCopies: []string{"user_id"},
		Columns: []counters.Column{add("total_requests", "bigint"), add("total_tokens", "bigint"), add("total_cost", "numeric"),
			add("quota_used", "numeric"), {Name: "last_used_at", Type: "timestamptz", Op: counters.Greatest}}})
	// ProviderAPIKeys are the providers' keys: requests, their outcomes, tokens, cost and time.
	ProviderAPIKeys = counters.MustTable(counters.TableSpec{Name: "provider_api_keys", Key: id, Slotted: true,
		SlotCopies: []string{"provider_id"},
		Columns: []counters.Column{add("request_count", "bigint"), add("success_count", "bigint"), add("error_count", "bigint"),
			add("total_tokens", "bigint"), add("total_cost", "numeric"), add("total_response_time_ms", "bigint")}})
	// GlobalModels are the models: how often each was used.
	GlobalModels = counters.MustTable(counters.TableSpec{Name: "global_models", Key: id, Slotted: true, SlotCopies: []string{"name"},
		Columns: []counters.Column{add("usage_count", "bigint")}})
	// Providers are the providers: the month's spend, stamped with the time of its last change.
	Providers = counters.MustTable(counters.TableSpec{Name: "providers", Key: id, Slotted: true, SlotCopies: []string{"name"},
		Columns: []counters.Column{add("monthly_used", "numeric"), {Name: "updated_at", Type: "timestamptz", Op: counters.ServerTime}}})
	// Wallets are the users' balances (keyed by user), stamped likewise.
	Wallets = counters.MustTable(counters.TableSpec{Name: "wallets", Key: []counters.Column{{Name: "user_id", Type: "text"}}, Slotted: true,
		Columns: []counters.Column{add("balance", "numeric"), {Name: "updated_at", Type: "timestamptz", Op: counters.ServerTime}}})
	// ProxyNodes are the egress proxies: requests and their failures by cause.
	ProxyNodes = counters.MustTable(counters.TableSpec{Name: "proxy_nodes", Key: id, Slotted: true,
		Columns: []counters.Column{add("total_requests", "bigint"), add("failed_requests", "bigint"), add("dns_failures", "bigint"),
			add("stream_errors", "bigint")}})
	// ManagementTokens are the admin API's tokens: uses, and the time and address of the newest.
	ManagementTokens = counters.MustTable(counters.TableSpec{Name: "management_tokens", Key: id, Slotted: true,
		Columns: []counters.Column{add("usage_count", "bigint"), {Name: "last_used_at", Type: "timestamptz", Op: counters.Greatest},
			{Name: "last_used_ip", Type: "text", Op: counters.FollowsNewest, Follows: "last_used_at"}}})
)

// ProviderMonthly adds a cost to a provider's month (the usage and settlement suites both do).
var ProviderMonthly = Providers.MustChange("monthly_used", "updated_at")

// Row is the row of t keyed by the text id.
func Row(t *counters.Table, id string) counters.Key { return t.Row(counters.Text(id)) }

// The MySQL statements that seed the hot sets' rows of the tables the suites share, each
// with $1 = --hot-keys (counters.DialectSQL.SeedSQL): set h's user, api key and provider.
var (
	UsersSeedMySQL     = `INSERT INTO users (id, name) SELECT CONCAT('user-hot-', h), CONCAT('hot user ', h) FROM ` + counters.HotSetsMySQL
	APIKeysSeedMySQL   = `INSERT INTO api_keys (id, user_id) SELECT CONCAT('key-hot-', h), CONCAT('user-hot-', h) FROM ` + counters.HotSetsMySQL
	ProvidersSeedMySQL = `INSERT INTO providers (id, name) SELECT CONCAT('provider-hot-', h), CONCAT('provider ', h) FROM ` + counters.HotSetsMySQL
)

// RequestIndexMySQL is the index of the request whose usage row's request_id is req-i, in
// MySQL's SQL (counters.DialectSQL.ClaimIndex): PostgreSQL's is split_part(request_id, '-', 2)::int8.
const RequestIndexMySQL = "CAST(SUBSTRING_INDEX(request_id, '-', -1) AS SIGNED)"
