package sqlshape

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The parse tree of pg_query_go, read generically.

// walk visits m and every message under it, depth first: a generic walk over the
// parse tree, so that a sub-select or a CTE anywhere is found without a case per node
// type.
func walk(m protoreflect.Message, visit func(protoreflect.Message)) {
	visit(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				walk(list.Get(i).Message(), visit)
			}
			return true
		}
		walk(v.Message(), visit)
		return true
	})
}

// nodeType is the parse-tree type of a statement as pg_query names its field:
// "create_stmt", "variable_set_stmt".
func nodeType(n *pg.Node) string {
	m := n.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().Get(0))
	if fd == nil {
		return ""
	}
	return string(fd.Name())
}

var commandTags = map[string]string{
	"create_stmt": "CREATE TABLE", "index_stmt": "CREATE INDEX", "view_stmt": "CREATE VIEW",
	"create_table_as_stmt": "CREATE TABLE AS", "alter_table_stmt": "ALTER TABLE", "drop_stmt": "DROP",
	"rename_stmt": "ALTER … RENAME", "define_stmt": "CREATE", "composite_type_stmt": "CREATE TYPE",
	"rule_stmt": "CREATE RULE", "create_trig_stmt": "CREATE TRIGGER", "create_function_stmt": "CREATE FUNCTION",
	"variable_set_stmt": "SET", "variable_show_stmt": "SHOW", "copy_stmt": "COPY", "do_stmt": "DO",
	"call_stmt": "CALL", "explain_stmt": "EXPLAIN", "lock_stmt": "LOCK", "notify_stmt": "NOTIFY",
	"listen_stmt": "LISTEN", "unlisten_stmt": "UNLISTEN", "vacuum_stmt": "VACUUM", "prepare_stmt": "PREPARE",
	"execute_stmt": "EXECUTE", "deallocate_stmt": "DEALLOCATE", "discard_stmt": "DISCARD",
	"refresh_mat_view_stmt": "REFRESH MATERIALIZED VIEW", "grant_stmt": "GRANT", "comment_stmt": "COMMENT",
	"check_point_stmt": "CHECKPOINT", "declare_cursor_stmt": "DECLARE", "fetch_stmt": "FETCH",
	"close_portal_stmt": "CLOSE", "reindex_stmt": "REINDEX", "cluster_stmt": "CLUSTER",
	"transaction_stmt": "transaction control",
}

// commandTag names a statement's command for messages.
func commandTag(n *pg.Node) string {
	typ := nodeType(n)
	if tag, ok := commandTags[typ]; ok {
		return tag
	}
	if t, ok := n.Node.(*pg.Node_TransactionStmt); ok {
		return strings.TrimPrefix(t.TransactionStmt.Kind.String(), "TRANS_STMT_")
	}
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(typ, "_stmt"), "_", " "))
}

// isDDL says whether a statement changes the schema (or its privileges or comments).
func isDDL(n *pg.Node) bool {
	typ := nodeType(n)
	for _, prefix := range []string{"create", "alter_", "drop", "rename_", "grant", "comment_", "sec_label_",
		"reassign_owned_", "import_foreign_schema_"} {
		if strings.HasPrefix(typ, prefix) {
			return true
		}
	}
	switch typ {
	case "index_stmt", "view_stmt", "rule_stmt", "define_stmt", "composite_type_stmt",
		"refresh_mat_view_stmt", "reindex_stmt", "cluster_stmt":
		return true
	}
	return false
}
