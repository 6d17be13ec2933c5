package sqlshape

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadCatalog(t *testing.T) {
	f := newFixture(t)
	table := func(name string) *Table {
		t.Helper()
		tb := f.cat.Table(name)
		if tb == nil {
			t.Fatalf("the catalog has no table %s", name)
		}
		return tb
	}
	keys := map[string][]string{
		"pgbench_accounts": {"aid"}, "pgbench_branches": {"bid"}, "pgbench_tellers": {"tid"},
		"pgbench_history": nil, "stock": {"warehouse", "sku"}, "nokey": nil, "inventory": {"sku"},
	}
	for name, want := range keys {
		if got := table(name).PrimaryKey; !slices.Equal(got, want) {
			t.Errorf("%s: primary key %v, want %v", name, got, want)
		}
	}

	inv := table("inventory")
	if len(inv.Checks) != 1 || !slices.Equal(inv.Checks[0].Columns, []string{"qty"}) ||
		checkBody(inv.Checks[0].Definition) != "(qty >= 0)" {
		t.Errorf("inventory's checks: %+v", inv.Checks)
	}
	if inv.MultiColumnCheck() != nil {
		t.Errorf("inventory's single-column CHECK taken for a multi-column one")
	}
	if c := table("pair").MultiColumnCheck(); c == nil || !slices.Equal(c.Columns, []string{"lo", "hi"}) {
		t.Errorf("pair's CHECK (lo <= hi): %+v", c)
	}
	if got := table("audited").Triggers; !slices.Equal(got, []string{"audited_audit"}) {
		t.Errorf("audited's triggers: %v", got)
	}
	// The foreign keys' and unique constraints' internal triggers are not user triggers.
	if got := table("ledger").Triggers; len(got) != 0 {
		t.Errorf("ledger's triggers: %v, want none (its foreign key's are internal)", got)
	}
	if got := table("ruled").Rules; !slices.Equal(got, []string{"ruled_nothing"}) {
		t.Errorf("ruled's rules: %v", got)
	}
	if got := table("wallet_view"); got.Kind != View || len(got.Rules) != 0 {
		t.Errorf("wallet_view: kind %v, rules %v", got.Kind, got.Rules)
	}
	if got := table("events").Kind; got != Partitioned {
		t.Errorf("events: kind %v", got)
	}
	if !table("parent").HasChildren || table("child").HasChildren {
		t.Errorf("inheritance: parent %v, child %v", table("parent").HasChildren, table("child").HasChildren)
	}

	points := table("points")
	p, sp := points.Column("p"), points.Column("sp")
	if p.BaseTypeOID != oidInt8 || p.TypeOID == oidInt8 || len(p.DomainCheck) != 1 || !p.NotNull {
		t.Errorf("points.p (domain positive over bigint): %+v", p)
	}
	if sp.BaseTypeOID != oidInt8 || len(sp.DomainCheck) != 2 {
		t.Errorf("points.sp (domain over a domain): base %d, checks %d", sp.BaseTypeOID, len(sp.DomainCheck))
	}
	var uniqueNames []string
	for _, k := range points.UniqueKeys {
		uniqueNames = append(uniqueNames, k.Name)
		if k.Name == "points_lower_email" &&
			(!k.Expression || !k.Partial || len(k.Columns) != 0 || !slices.Equal(sorted(k.References), []string{"email", "n"})) {
			t.Errorf("points_lower_email: %+v", k)
		}
	}
	if !slices.Equal(uniqueNames, []string{"points_email_key", "points_lower_email", "points_pkey"}) {
		t.Errorf("points' unique keys: %v", uniqueNames)
	}
	if len(points.ForeignKeys) != 1 || points.ForeignKeys[0].RefTable != "user_wallets" ||
		!slices.Equal(points.ForeignKeys[0].Columns, []string{"owner"}) {
		t.Errorf("points' foreign keys: %+v", points.ForeignKeys)
	}
	var referencing []string
	for _, fk := range table("user_wallets").ReferencedBy {
		referencing = append(referencing, fk.Table)
	}
	if !slices.Equal(sorted(referencing), []string{"ledger", "points"}) {
		t.Errorf("user_wallets referenced by %v", referencing)
	}

	ledger := table("ledger")
	var claimable []string
	for _, k := range ledger.Claimable() {
		claimable = append(claimable, k.Name)
	}
	if !slices.Equal(claimable, []string{"ledger_pkey", "ledger_request_id_key"}) {
		t.Errorf("ledger's claimable keys: %v", claimable)
	}
	if id := ledger.Column("id"); !id.HasDefault || id.BaseTypeOID != oidInt8 {
		t.Errorf("ledger.id (bigserial): %+v", id)
	}
	if prec, scale, ok := table("measures").Column("hundreds").numericDigits(); !ok || prec != 10 || scale != -2 {
		t.Errorf("numeric(10,-2): precision %d scale %d ok %v", prec, scale, ok)
	}
	if prec, scale, ok := table("stock").Column("qty").numericDigits(); !ok || prec != 12 || scale != 0 {
		t.Errorf("numeric(12,0): precision %d scale %d ok %v", prec, scale, ok)
	}
	if got := table("pgbench_accounts").Column("filler").TypeName; got != "character(84)" {
		t.Errorf("pgbench_accounts.filler: %q", got)
	}
}

func TestLoadCatalogNamedTables(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := LoadCatalog(ctx, f.target.Admin(), f.target.Schema(), []string{"inventory", "ledger"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tables) != 2 || cat.Table("inventory") == nil || cat.Table("ledger") == nil {
		t.Errorf("tables %v, want inventory and ledger", cat.Tables)
	}
	// user_wallets is not loaded, and its foreign key from ledger still names it.
	if fks := cat.Table("ledger").ForeignKeys; len(fks) != 1 || fks[0].RefTable != "user_wallets" {
		t.Errorf("ledger's foreign keys: %+v", fks)
	}
	_, err = LoadCatalog(ctx, f.target.Admin(), f.target.Schema(), []string{"inventory", "nosuch", "gone"})
	if err == nil || !strings.Contains(err.Error(), "no table nosuch, gone") {
		t.Errorf("missing tables: %v", err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
