// Package scripts ships the example pgbench scripts of the script suite (-f) and the init
// files that create their tables (--init-file), embedded so that tests and binaries read the
// very files a user copies: PostgreSQL's (*.sql) and, under mysql/, those written in MySQL's
// SQL for a run on MySQL or MariaDB (--database mariadb, --mysql-url). It lists each example with the variables it is documented with;
// it parses and runs nothing (testkit/suites/script/internal/pgscript reads the files, its tests run them).
package scripts

import "embed"

// Files holds the scripts and init files, by file name.
//
//go:embed *.sql mysql/*.sql
var Files embed.FS

// Example is a script, the init file that creates its tables, and its variables.
type Example struct {
	// Script and Init are file names in Files.
	Script, Init string
	// Set are the documented -D / --set values, NAME=VALUE: every variable the script and
	// its init file read besides the built-ins (:request_id, :client_id).
	Set []string
	// SyncOnly says the kit refuses the script for the queue modes; the script's comment
	// says why.
	SyncOnly bool
}

// List returns the examples.
func List() []Example {
	return []Example{
		{Script: "tpcb-like.sql", Init: "tpcb-init.sql", Set: []string{"scale=1"}},
		{Script: "simple-update.sql", Init: "tpcb-init.sql", Set: []string{"scale=1"}},
		{Script: "tpcb-skewed.sql", Init: "tpcb-init.sql", Set: []string{"scale=1", "theta=0.99"}},
		{Script: "wallet-debit.sql", Init: "wallet-init.sql", Set: []string{"wallets=10000", "theta=0.99"}},
		{Script: "inventory-decrement.sql", Init: "inventory-init.sql", Set: []string{"skus=1000", "stock=100"}, SyncOnly: true},
		{Script: "usage-counter.sql", Init: "usage-counter-init.sql", Set: []string{"hot_keys=1"}},
	}
}

// ListMySQL returns the examples written in MySQL's SQL (file names under mysql/).
func ListMySQL() []Example {
	return []Example{
		{Script: "mysql/tpcb-like.sql", Init: "mysql/tpcb-init.sql", Set: []string{"scale=1"}},
		{Script: "mysql/wallet-debit.sql", Init: "mysql/wallet-init.sql", Set: []string{"wallets=10000", "theta=0.99"}},
	}
}
