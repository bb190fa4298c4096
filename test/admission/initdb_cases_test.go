package admission_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestClusterInitDB(t *testing.T) {
	initdb := func(fields string) string { return validCluster + "  bootstrap:\n    initdb: {" + fields + "}\n" }
	const dbFormat = "database must start with a lower-case letter and hold only lower-case letters, digits and '_'"
	const ownerFormat = "owner must start with a lower-case letter and hold only lower-case letters, digits and '_'"
	runAdmissionCases(t, []admissionCase{
		{name: "initdb without names is accepted: app owned by app", manifest: initdb("")},
		{name: "initdb with a database and an owner is accepted", manifest: initdb("database: shop_1, owner: shopper")},
		{name: "a database of 64 characters is accepted", manifest: initdb("database: d" + strings.Repeat("b", 63))},
		{name: "a database of 65 characters is rejected", manifest: initdb("database: d" + strings.Repeat("b", 64)),
			wantErr: "spec.bootstrap.initdb.database: Too long"},
		{name: "an owner of 33 characters is rejected", manifest: initdb("owner: o" + strings.Repeat("w", 32)),
			wantErr: "spec.bootstrap.initdb.owner: Too long"},
		{name: "a database with a dot is rejected", manifest: initdb("database: a.b"), wantErr: dbFormat},
		{name: "a database starting with a digit is rejected", manifest: initdb("database: 1db"), wantErr: dbFormat},
		{name: "a database with a backtick is rejected", manifest: initdb("database: \"a`b\""), wantErr: dbFormat},
		{name: "a database in upper case is rejected", manifest: initdb("database: Shop"), wantErr: dbFormat},
		{name: "a Unicode database is rejected", manifest: initdb("database: dé"), wantErr: dbFormat},
		{name: "an empty-looking database of spaces is rejected", manifest: initdb("database: \" \""), wantErr: dbFormat},
		{name: "the system schema mysql is rejected", manifest: initdb("database: mysql"), wantErr: "database cannot be a system schema"},
		{name: "the system schema performance_schema is rejected", manifest: initdb("database: performance_schema"),
			wantErr: "database cannot be a system schema"},
		{name: "an owner with a quote is rejected", manifest: initdb("owner: \"a'b\""), wantErr: ownerFormat},
		{name: "an owner with a host part is rejected", manifest: initdb("owner: \"app@localhost\""), wantErr: ownerFormat},
		{name: "the owner root is rejected", manifest: initdb("owner: root"),
			wantErr: "owner cannot be one of the operator's accounts"},
		{name: "the owner replication is rejected", manifest: initdb("owner: replication"),
			wantErr: "owner cannot be one of the operator's accounts"},
		{name: "initdb beside recovery is rejected",
			manifest: validCluster + "  bootstrap:\n    initdb: {database: shop}\n    recovery:\n      backup: {name: b}\n",
			wantErr:  "bootstrap takes either initdb or recovery, not both"},
		{name: "initdb cannot change once the Cluster exists", manifest: initdb("database: shop, owner: shopper"),
			update:        func(u *unstructured.Unstructured) { setField(u, "other", "spec", "bootstrap", "initdb", "database") },
			wantUpdateErr: "bootstrap.initdb cannot change once the Cluster exists"},
	})
}
