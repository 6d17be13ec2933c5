package sqldb

import (
	"fmt"
	"slices"
	"strings"
)

// IsMariaDB says whether a MySQL-protocol server's VERSION() text v is MariaDB's
// ("10.11.19-MariaDB-0+deb12u1"); MySQL's is not ("8.0.36").
func IsMariaDB(v string) bool { return strings.Contains(v, "MariaDB") }

// MySQLAtLeast says whether the server of VERSION() text v is at least mysql (a MySQL) or
// mariadb (a MariaDB), each major, minor and patch; a version without a patch ("11.1") has
// patch 0. The error says v does not begin with a version.
func MySQLAtLeast(v string, mysql, mariadb [3]int) (bool, error) {
	var x [3]int
	if n, _ := fmt.Sscanf(v, "%d.%d.%d", &x[0], &x[1], &x[2]); n < 2 {
		return false, fmt.Errorf("the server's version %q is not major.minor[.patch]", v)
	}
	least := mysql
	if IsMariaDB(v) {
		least = mariadb
	}
	return slices.Compare(x[:], least[:]) >= 0, nil
}
