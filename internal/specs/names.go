package specs

import (
	"strconv"
	"strings"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
)

// Suffixes of the default role Services.
const (
	rwSuffix = "-rw"
	roSuffix = "-ro"
	rSuffix  = "-r"
)

// InstanceName is the name of instance serial n of a Cluster: <cluster>-<n>. It names the Pod,
// its PVC and its headless Service.
func InstanceName(cluster string, serial int32) string {
	return cluster + "-" + strconv.FormatInt(int64(serial), 10)
}

// InstanceSerial parses the serial out of an instance name of cluster; ok is false when name is
// not <cluster>-<n> with n >= 1.
func InstanceSerial(cluster, name string) (serial int32, ok bool) {
	rest, found := strings.CutPrefix(name, cluster+"-")
	if !found || rest == "" || rest[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || n < 1 {
		return 0, false
	}
	return int32(n), true
}

// RoleServiceName is the name of the default Service routing to role: <cluster>-rw, -ro or -r.
func RoleServiceName(cluster string, role mysqlv1alpha1.ServiceSelectorType) string {
	switch role {
	case mysqlv1alpha1.ServiceSelectorTypeRO:
		return cluster + roSuffix
	case mysqlv1alpha1.ServiceSelectorTypeR:
		return cluster + rSuffix
	default:
		return cluster + rwSuffix
	}
}

// MetricsServerName is the TLS server name scrapers of the instances' /metrics verify: a name
// every instance's server certificate carries, the -r Service's, even when that Service is
// disabled.
func MetricsServerName(cluster string) string {
	return RoleServiceName(cluster, mysqlv1alpha1.ServiceSelectorTypeR)
}

// AdditionalServiceName is the name of a user-declared Service: <cluster>-<name>.
func AdditionalServiceName(cluster, name string) string {
	return cluster + "-" + name
}

// PDBName is the name of the Cluster's PodDisruptionBudget.
func PDBName(cluster string) string { return cluster }

// CASecretName holds the cluster CA certificate and key.
func CASecretName(cluster string) string { return cluster + "-ca" }

// MetricsSecretName is the Secret scrapers of the instances' /metrics read: MetricsTokenKey, the
// bearer token, and MetricsCAKey, the CA certificates that verify the instances.
func MetricsSecretName(cluster string) string { return cluster + "-metrics" }

// ServerCertSecretName holds the server certificate of one instance.
func ServerCertSecretName(instance string) string { return instance + "-server-tls" }

// OperatorClientSecretName holds the client certificate the operator presents to instances.
func OperatorClientSecretName(cluster string) string { return cluster + "-operator-client-tls" }

// ReplicationClientSecretName holds the client certificate of the replication user (X509).
func ReplicationClientSecretName(cluster string) string { return cluster + "-replication-client-tls" }

// ReplicationClientSubject is the subject of that certificate as mysqld writes it: the
// replication and clone donor accounts require it (REQUIRE SUBJECT), so that no other
// certificate of the cluster CA (the operator's, a server's) logs in as them.
const ReplicationClientSubject = "/CN=" + UserReplication

// FenceClientSubject is the subject of the operator's client certificate as mysqld writes it:
// the fence account requires it (REQUIRE SUBJECT), so only the operator logs in as it.
const FenceClientSubject = "/CN=" + certs.OperatorCommonName

// User accounts with a password Secret each.
const (
	UserRoot        = "root"
	UserReplication = "replication"
	UserBackup      = "backup"
	UserApp         = "app"
	// UserFence is the operator's account on mysqld's administrative interface: it stops writes
	// on a server whose instance manager does not answer (mysql.Fence).
	UserFence = "fence"
)

// Users lists the accounts that get a password Secret, in a fixed order.
var Users = []string{UserRoot, UserReplication, UserBackup, UserApp, UserFence}

// UserSecretName is the Secret holding the password of user: <cluster>-<user>.
func UserSecretName(cluster, user string) string { return cluster + "-" + user }
