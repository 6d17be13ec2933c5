package counters

import "testing/fstest"

// The tables the package's tests declare, as a suite would (TestSQL creates them, on
// PostgreSQL and, in mysql/, on MySQL): Tellers, keyed by two integers like pgbench's,
// unslotted, with a column of every Op but FollowsNewest; Devices, keyed by text and slotted,
// with a count, an amount, the newest use and its address (FollowsNewest), and the server's
// time.
var (
	TestSQL = fstest.MapFS{"tables.sql": {Data: []byte(`
		CREATE TABLE IF NOT EXISTS tellers (
			bid     int4 NOT NULL,
			tid     int4 NOT NULL,
			balance int4 NOT NULL DEFAULT 0,
			highest int8,
			lowest  int8,
			note    text,
			changed timestamptz,
			filler  char(84),
			PRIMARY KEY (bid, tid)
		);
		CREATE TABLE IF NOT EXISTS devices (
			name      text NOT NULL,
			slot      smallint NOT NULL DEFAULT 0,
			owner     text NOT NULL,
			uses      bigint NOT NULL DEFAULT 0,
			spent     numeric(20, 8) NOT NULL DEFAULT 0,
			seen_at   timestamptz,
			seen_from text,
			touched   timestamptz,
			PRIMARY KEY (name, slot)
		);`)},
		"mysql/tables.sql": {Data: []byte(`
		CREATE TABLE IF NOT EXISTS tellers (
			bid     INT NOT NULL,
			tid     INT NOT NULL,
			balance INT NOT NULL DEFAULT 0,
			highest BIGINT,
			lowest  BIGINT,
			note    TEXT,
			changed DATETIME(6),
			filler  CHAR(84),
			PRIMARY KEY (bid, tid)
		) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
		CREATE TABLE IF NOT EXISTS devices (
			name      VARCHAR(64) NOT NULL,
			slot      SMALLINT NOT NULL DEFAULT 0,
			owner     VARCHAR(64) NOT NULL,
			uses      BIGINT NOT NULL DEFAULT 0,
			spent     DECIMAL(20, 8) NOT NULL DEFAULT 0,
			seen_at   DATETIME(6),
			seen_from VARCHAR(64),
			touched   DATETIME(6),
			PRIMARY KEY (name, slot)
		) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;`)},
	}

	Tellers = MustTable(TableSpec{Name: "tellers", Key: []Column{{Name: "bid", Type: "int4"}, {Name: "tid", Type: "integer"}},
		Columns: []Column{{Name: "balance", Type: "int4", Op: Add}, {Name: "highest", Type: "int8", Op: Greatest},
			{Name: "lowest", Type: "int8", Op: Least}, {Name: "note", Type: "text", Op: Assign},
			{Name: "changed", Type: "timestamptz", Op: ServerTime}}})
	Devices = MustTable(TableSpec{Name: "devices", Key: []Column{{Name: "name", Type: "text"}}, Slotted: true,
		SlotCopies: []string{"owner"},
		Columns: []Column{{Name: "uses", Type: "bigint", Op: Add}, {Name: "spent", Type: "numeric(20,8)", Op: Add},
			{Name: "seen_at", Type: "timestamptz", Op: Greatest},
			{Name: "seen_from", Type: "text", Op: FollowsNewest, Follows: "seen_at"},
			{Name: "touched", Type: "timestamptz", Op: ServerTime}}})
)
