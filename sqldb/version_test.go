package sqldb

import "testing"

func TestMySQLAtLeast(t *testing.T) {
	mysql, mariadb := [3]int{8, 0, 4}, [3]int{10, 6, 0}
	for v, want := range map[string]bool{
		"8.0.36": true, "8.0.4": true, "8.0.3": false, "5.7.44-log": false,
		"10.11.19-MariaDB-0+deb12u1": true, "10.6.0-MariaDB": true, "10.5.23-MariaDB": false, "11.1-MariaDB": true,
	} {
		if got, err := MySQLAtLeast(v, mysql, mariadb); got != want || err != nil {
			t.Errorf("%s: %v (%v), want %v", v, got, err, want)
		}
	}
	if _, err := MySQLAtLeast("unknown", mysql, mariadb); err == nil {
		t.Error("a version that is none was taken")
	}
}
