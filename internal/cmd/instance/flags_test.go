package instance

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
)

func TestParsePeers(t *testing.T) {
	got, err := parsePeers([]string{"db-2=127.0.0.12:3307:8002"})
	want := instance.PeerAddress{Host: "127.0.0.12", MySQLPort: 3307, ManagerAddr: "127.0.0.12:8002"}
	if err != nil || got["db-2"] != want {
		t.Errorf("parsePeers = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"db-2", "=h:1:2", "db-2=h:1", "db-2=h:x:2", "db-2=:1:2"} {
		if _, err := parsePeers([]string{bad}); err == nil {
			t.Errorf("parsePeers(%q) accepted", bad)
		}
	}
}

func TestKeyValues(t *testing.T) {
	got, err := keyValues([]string{"innodb_buffer_pool_size=32M", "secure_file_priv="})
	if err != nil || got["innodb_buffer_pool_size"] != "32M" || got["secure_file_priv"] != "" || len(got) != 2 {
		t.Errorf("keyValues = %v, %v", got, err)
	}
	if _, err := keyValues([]string{"novalue"}); err == nil {
		t.Error("keyValues accepted a value without =")
	}
}
