package specs

import (
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DefaultAppName is the application database and its owner when bootstrap.initdb leaves them out.
const DefaultAppName = "app"

// Keys of the application Secret <cluster>-app besides username and password.
const (
	AppHostKey    = "host"
	AppPortKey    = "port"
	AppDBNameKey  = "dbname"
	AppURIKey     = "uri"
	AppJDBCURIKey = "jdbc-uri"
	// AppCAKey is the cluster CA's certificate (the trust bundle during a CA roll), for clients
	// that verify the server; never the CA's key.
	AppCAKey = "ca.crt"
)

// AppAccount returns the application database and its owner: bootstrap.initdb's, app by default.
func AppAccount(c *mysqlv1alpha1.Cluster) (database, owner string) {
	database, owner = DefaultAppName, DefaultAppName
	if b := c.Spec.Bootstrap; b != nil && b.InitDB != nil {
		if b.InitDB.Database != "" {
			database = b.InitDB.Database
		}
		if b.InitDB.Owner != "" {
			owner = b.InitDB.Owner
		}
	}
	return database, owner
}

// AppHost is the name applications reach the primary by: the -rw Service, as the server
// certificates name it.
func AppHost(c *mysqlv1alpha1.Cluster) string {
	return RoleServiceName(c.Name, mysqlv1alpha1.ServiceSelectorTypeRW) + "." + c.Namespace + ".svc"
}

// BuildAppSecret returns the application Secret <cluster>-app: the owner's name and password, and
// how to reach the application database through the -rw Service, as separate fields and as
// connection URIs. The URIs ask the client to verify the server (VERIFY_IDENTITY: signed by the
// cluster CA and naming the -rw Service); ca.crt, the CA's certificate, is added by the Cluster
// controller once the CA exists (AppTrustData).
func BuildAppSecret(c *mysqlv1alpha1.Cluster, password string) *corev1.Secret {
	database, owner := AppAccount(c)
	host, port := AppHost(c), strconv.Itoa(MySQLPort)
	hostPort := net.JoinHostPort(host, port)
	uri := url.URL{Scheme: "mysql", User: url.UserPassword(owner, password), Host: hostPort, Path: "/" + database,
		RawQuery: "ssl-mode=VERIFY_IDENTITY"}
	jdbc := "jdbc:mysql://" + hostPort + "/" + database + "?" + url.Values{
		"user": {owner}, "password": {password}, "sslMode": {"VERIFY_IDENTITY"}}.Encode()
	return &corev1.Secret{
		ObjectMeta: objectMeta(c, UserSecretName(c.Name, UserApp)),
		Type:       corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{
			corev1.BasicAuthUsernameKey: []byte(owner),
			corev1.BasicAuthPasswordKey: []byte(password),
			AppHostKey:                  []byte(host),
			AppPortKey:                  []byte(port),
			AppDBNameKey:                []byte(database),
			AppURIKey:                   []byte(uri.String()),
			AppJDBCURIKey:               []byte(jdbc),
		},
	}
}

// AppTrustData returns data, the application Secret's, with ca.crt set to bundle, or nil when it
// already holds it. A Secret the Cluster did not create is never passed here.
func AppTrustData(data map[string][]byte, bundle []byte) map[string][]byte {
	return withTrust(data, AppCAKey, bundle)
}

// withTrust is a copy of a Secret's data with key set to the trust bundle, nil when it already
// holds it (or there is no bundle yet); the other keys are kept.
func withTrust(data map[string][]byte, key string, bundle []byte) map[string][]byte {
	if len(bundle) == 0 || string(data[key]) == string(bundle) {
		return nil
	}
	out := make(map[string][]byte, len(data)+1)
	for k, v := range data {
		out[k] = v
	}
	out[key] = bundle
	return out
}
