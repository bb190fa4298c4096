package objectstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func validMetadata() objectstore.Metadata {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	return objectstore.Metadata{
		SchemaVersion: 1, Cluster: "pc1", BackupName: "nightly", BackupID: "id1",
		Method: "clone", Format: "tar", Compression: "zstd", Size: 123, SHA256: strings.Repeat("0a", 32),
		GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42", BinlogFile: "binlog.000003", BinlogPosition: 157,
		ServerVersion: "9.7.0", StartedAt: start, StoppedAt: start.Add(time.Minute),
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	m := validMetadata()
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"schemaVersion": 1`, `"method": "clone"`, `"format": "tar"`, `"compression": "zstd"`,
		`"size": 123`, `"sha256": "0a0a`, `"gtidExecuted": "3e11`, `"binlogFile": "binlog.000003"`, `"binlogPosition": 157`,
		`"serverVersion": "9.7.0"`, `"startedAt": "2026-03-01T11:00:00Z"`, `"stoppedAt": "2026-03-01T11:01:00Z"`,
		`"cluster": "pc1"`, `"backupName": "nightly"`, `"backupId": "id1"`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("encoded metadata lacks %s:\n%s", field, data)
		}
	}
	got, err := objectstore.DecodeMetadata(data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.StartedAt.Equal(m.StartedAt) || !got.StoppedAt.Equal(m.StoppedAt) {
		t.Errorf("times changed: %v %v", got.StartedAt, got.StoppedAt)
	}
	got.StartedAt, got.StoppedAt = m.StartedAt, m.StoppedAt
	if *got != m {
		t.Errorf("decoded %+v, want %+v", got, m)
	}
	if got.Checksum() != "sha256:"+m.SHA256 {
		t.Errorf("checksum %q", got.Checksum())
	}
	// Fields added within a version are ignored by older readers.
	extra := strings.Replace(string(data), `"size"`, `"futureField": true, "size"`, 1)
	if _, err := objectstore.DecodeMetadata([]byte(extra)); err != nil {
		t.Errorf("unknown field: %v", err)
	}
}

// TestMetadataNamespace: the Cluster's namespace is recorded when known and omitted when not,
// so documents written before it existed read the same; a backup without one belongs to any
// namespace's Cluster of that name.
func TestMetadataNamespace(t *testing.T) {
	m := validMetadata()
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "namespace") {
		t.Errorf("a metadata without a namespace encodes one:\n%s", data)
	}
	if !m.BelongsTo("team-a") || !m.BelongsTo("team-b") {
		t.Error("a metadata without a namespace must belong to any namespace")
	}
	m.Namespace = "team-a"
	if data, err = m.Encode(); err != nil || !strings.Contains(string(data), `"namespace": "team-a"`) {
		t.Fatalf("encoded %s, %v; want the namespace", data, err)
	}
	got, err := objectstore.DecodeMetadata(data)
	if err != nil || got.Namespace != "team-a" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if !got.BelongsTo("team-a") || got.BelongsTo("team-b") {
		t.Errorf("namespace team-a: belongs to team-a %v, to team-b %v", got.BelongsTo("team-a"), got.BelongsTo("team-b"))
	}
}

func TestMetadataValidate(t *testing.T) {
	for _, tc := range []struct {
		rule   string
		change func(*objectstore.Metadata)
	}{
		{"unknown schema version", func(m *objectstore.Metadata) { m.SchemaVersion = 2 }},
		{"missing schema version", func(m *objectstore.Metadata) { m.SchemaVersion = 0 }},
		{"unknown method", func(m *objectstore.Metadata) { m.Method = "mysqldump" }},
		{"unknown format", func(m *objectstore.Metadata) { m.Format = "zip" }},
		{"unknown compression", func(m *objectstore.Metadata) { m.Compression = "gzip" }},
		{"empty archive", func(m *objectstore.Metadata) { m.Size = 0 }},
		{"short sha256", func(m *objectstore.Metadata) { m.SHA256 = "abc" }},
		{"uppercase sha256", func(m *objectstore.Metadata) { m.SHA256 = strings.Repeat("0A", 32) }},
		{"no server version", func(m *objectstore.Metadata) { m.ServerVersion = "" }},
		{"negative binlog position", func(m *objectstore.Metadata) { m.BinlogPosition = -1 }},
		{"no start time", func(m *objectstore.Metadata) { m.StartedAt = time.Time{} }},
		{"stopped before it started", func(m *objectstore.Metadata) { m.StoppedAt = m.StartedAt.Add(-time.Second) }},
		{"backup named binlogs", func(m *objectstore.Metadata) { m.BackupName = "binlogs" }},
		{"namespace not a DNS label", func(m *objectstore.Metadata) { m.Namespace = "Team_A" }},
		{"namespace too long", func(m *objectstore.Metadata) { m.Namespace = strings.Repeat("a", 64) }},
	} {
		m := validMetadata()
		tc.change(&m)
		if _, err := m.Encode(); !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%s: encode: got %v, want ErrInvalid", tc.rule, err)
		}
	}
	m := validMetadata()
	m.GTIDExecuted, m.BinlogFile, m.BinlogPosition = "", "", 0
	if err := m.Validate(); err != nil {
		t.Errorf("a server with no GTID executed yet: %v", err)
	}
}

func TestDecodeMetadataRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"newer version":                 `{"schemaVersion": 2, "method": "something-new"}`,
		"no version":                    `{"method": "clone"}`,
		"not JSON":                      `<Error/>`,
		"valid version, missing fields": `{"schemaVersion": 1}`,
	} {
		if _, err := objectstore.DecodeMetadata([]byte(doc)); !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}
