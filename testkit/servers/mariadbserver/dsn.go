package mariadbserver

import "regexp"

// dsnPassword finds the password of go-sql-driver/mysql's data source names
// (user:password@tcp(host:port)/db, user:password@/db) in a DSN or a text that holds one: the
// password runs to the last @ before the protocol's address or the database's slash.
var dsnPassword = regexp.MustCompile(`([^\s:@/()]*:)\S*@(\w*\(|/)`)

// RedactDSN returns s, a go-sql-driver/mysql data source name or a text holding one, with the
// password replaced. (A mysql:// URL is redacted by database.RedactURL, like PostgreSQL's.)
func RedactDSN(s string) string { return dsnPassword.ReplaceAllString(s, "${1}REDACTED@${2}") }
