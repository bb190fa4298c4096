package admission_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestClusterInitOnlyParameters: the parameters mysqld takes only when it initializes a data
// directory are accepted when the Cluster is created and fixed afterwards; other parameters change
// freely.
func TestClusterInitOnlyParameters(t *testing.T) {
	params := func(kv string) string { return validCluster + "  mysql:\n    parameters: {" + kv + "}\n" }
	const fixed = "take effect only when a data directory is initialized"
	set := func(key, value string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) { setField(u, value, "spec", "mysql", "parameters", key) }
	}
	runAdmissionCases(t, []admissionCase{
		{name: "lower_case_table_names is accepted at creation", manifest: params(`lower_case_table_names: "1"`)},
		{name: "another parameter changes freely beside it", manifest: params(`lower_case_table_names: "1", max_connections: "100"`),
			update: set("max_connections", "200")},
		{name: "it cannot be added to an existing Cluster", manifest: params(`max_connections: "100"`),
			update: set("lower_case_table_names", "1"), wantUpdateErr: fixed},
		{name: "nor in its dashed spelling", manifest: params(`max_connections: "100"`),
			update: set("lower-case-table-names", "1"), wantUpdateErr: fixed},
		{name: "nor to a Cluster created without parameters", manifest: validCluster,
			update: set("innodb_page_size", "32768"), wantUpdateErr: fixed},
		{name: "it cannot change", manifest: params(`innodb_page_size: "16384"`),
			update: set("innodb_page_size", "32768"), wantUpdateErr: fixed},
		{name: "it cannot be removed", manifest: params(`lower_case_table_names: "1", max_connections: "100"`),
			update: func(u *unstructured.Unstructured) {
				unstructured.RemoveNestedField(u.Object, "spec", "mysql", "parameters", "lower_case_table_names")
			}, wantUpdateErr: fixed},
	})
}
