package specs

import (
	"net/url"
	"testing"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestAppAccount(t *testing.T) {
	for _, tc := range []struct {
		rule                   string
		bootstrap              *mysqlv1alpha1.BootstrapConfiguration
		wantDatabase, wantUser string
	}{
		{"no bootstrap: app owned by app", nil, "app", "app"},
		{"initdb without names: app owned by app", &mysqlv1alpha1.BootstrapConfiguration{InitDB: &mysqlv1alpha1.BootstrapInitDB{}}, "app", "app"},
		{"initdb's names", &mysqlv1alpha1.BootstrapConfiguration{InitDB: &mysqlv1alpha1.BootstrapInitDB{Database: "shop", Owner: "shopper"}}, "shop", "shopper"},
		{"only the database named: owner app", &mysqlv1alpha1.BootstrapConfiguration{InitDB: &mysqlv1alpha1.BootstrapInitDB{Database: "shop"}}, "shop", "app"},
	} {
		c := testCluster()
		c.Spec.Bootstrap = tc.bootstrap
		if db, owner := AppAccount(c); db != tc.wantDatabase || owner != tc.wantUser {
			t.Errorf("%s: got %s owned by %s", tc.rule, db, owner)
		}
	}
}

func TestBuildAppSecret(t *testing.T) {
	c := testCluster()
	c.Spec.Bootstrap = &mysqlv1alpha1.BootstrapConfiguration{InitDB: &mysqlv1alpha1.BootstrapInitDB{Database: "shop", Owner: "shopper"}}
	s := BuildUserSecret(c, UserApp, "pw0")
	want := map[string]string{
		"username": "shopper", "password": "pw0", "host": "db-rw." + c.Namespace + ".svc", "port": "3306", "dbname": "shop",
		"uri":      "mysql://shopper:pw0@db-rw." + c.Namespace + ".svc:3306/shop?ssl-mode=VERIFY_IDENTITY",
		"jdbc-uri": "jdbc:mysql://db-rw." + c.Namespace + ".svc:3306/shop?password=pw0&sslMode=VERIFY_IDENTITY&user=shopper",
	}
	if s.Name != "db-app" || !ownedByCluster(s.ObjectMeta) || len(s.Data) != len(want) {
		t.Errorf("the app Secret is db-app, owned, with %d keys: %+v", len(want), s)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("%s = %q, want %q", k, s.Data[k], v)
		}
	}
	u, err := url.Parse(string(s.Data["uri"]))
	if pw, _ := u.User.Password(); err != nil || u.User.Username() != "shopper" || pw != "pw0" || u.Path != "/shop" {
		t.Errorf("the URI parses back to the same account and database: %v, %v", u, err)
	}
}

func TestAppTrustData(t *testing.T) {
	base := map[string][]byte{"username": []byte("app"), "password": []byte("pw")}
	for _, tc := range []struct {
		rule   string
		data   map[string][]byte
		bundle string
		want   bool
	}{
		{"a Secret without ca.crt gets the bundle", base, "CA1", true},
		{"a Secret with another ca.crt gets the new bundle (a CA roll)", map[string][]byte{"ca.crt": []byte("CA0")}, "CA1", true},
		{"a Secret with the bundle is left alone", map[string][]byte{"ca.crt": []byte("CA1")}, "CA1", false},
		{"no bundle yet (the CA is still to be made): nothing", base, "", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := AppTrustData(tc.data, []byte(tc.bundle))
			if (got != nil) != tc.want {
				t.Fatalf("AppTrustData = %v, want a change: %v", got, tc.want)
			}
			if got != nil && (string(got["ca.crt"]) != tc.bundle || got["ca.key"] != nil || len(got) != len(tc.data)+map[bool]int{true: 0, false: 1}[tc.data["ca.crt"] != nil]) {
				t.Errorf("AppTrustData = %v, want the Secret's keys and ca.crt %q", got, tc.bundle)
			}
		})
	}
}
