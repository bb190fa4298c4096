package specs

import (
	"testing"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ rule, got, want string }{
		{"instances are <cluster>-<n>", InstanceName("db", 12), "db-12"},
		{"rw Service", RoleServiceName("db", mysqlv1alpha1.ServiceSelectorTypeRW), "db-rw"},
		{"ro Service", RoleServiceName("db", mysqlv1alpha1.ServiceSelectorTypeRO), "db-ro"},
		{"r Service", RoleServiceName("db", mysqlv1alpha1.ServiceSelectorTypeR), "db-r"},
		{"additional Services are <cluster>-<name>", AdditionalServiceName("db", "lb"), "db-lb"},
		{"PDB", PDBName("db"), "db"},
		{"CA Secret", CASecretName("db"), "db-ca"},
		{"server certificate per instance", ServerCertSecretName("db-2"), "db-2-server-tls"},
		{"operator client certificate", OperatorClientSecretName("db"), "db-operator-client-tls"},
		{"replication client certificate", ReplicationClientSecretName("db"), "db-replication-client-tls"},
		{"user Secret", UserSecretName("db", UserApp), "db-app"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.rule, tc.got, tc.want)
		}
	}
}

func TestInstanceSerial(t *testing.T) {
	for _, tc := range []struct {
		rule, name string
		serial     int32
		ok         bool
	}{
		{"parses <cluster>-<n>", "db-3", 3, true},
		{"parses large serials", "db-120", 120, true},
		{"another cluster's prefix is not ours", "dbx-3", 0, false},
		{"a longer cluster name sharing the prefix is not ours", "db-rw-1", 0, false},
		{"serial zero is never used", "db-0", 0, false},
		{"leading zeros are not canonical", "db-01", 0, false},
		{"role Services are not instances", "db-rw", 0, false},
		{"empty suffix", "db-", 0, false},
	} {
		serial, ok := InstanceSerial("db", tc.name)
		if serial != tc.serial || ok != tc.ok {
			t.Errorf("%s: InstanceSerial(%q) = %d, %v; want %d, %v", tc.rule, tc.name, serial, ok, tc.serial, tc.ok)
		}
	}
}
