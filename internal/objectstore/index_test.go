package objectstore_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestIndexRoundTrip(t *testing.T) {
	x := objectstore.NewIndex()
	x.Upsert(segment("binlog.000001"))
	unknown := segment("binlog.000002")
	unknown.LastEventTime = time.Time{} // retention keeps a segment whose last event is unknown
	x.Upsert(unknown)
	data, err := x.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"schemaVersion":1`, `"name":"binlog.000001"`, `"size":1024`,
		`"firstEventTime":"2026-03-01T00:00:00Z"`, `"lastEventTime":"2026-03-01T01:00:00Z"`,
		`"gtidRange":"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42"`, `"sha256":"abab`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("encoded index lacks %s: %s", field, data)
		}
	}
	if strings.Count(string(data), "lastEventTime") != 1 {
		t.Errorf("an unknown last event time should be omitted: %s", data)
	}
	got, err := objectstore.DecodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := got.Find("binlog.000002"); !ok || !s.LastEventTime.IsZero() || s.FirstEventTime.IsZero() {
		t.Errorf("segment 2 decoded as %+v", s)
	}
	again, _ := got.Encode()
	if !bytes.Equal(again, data) {
		t.Errorf("encoding is not stable:\n%s\n%s", data, again)
	}
	x.Upsert(segment("binlog.000001"))
	if len(x.Segments) != 2 {
		t.Errorf("upsert of an existing name added a segment")
	}
	if n := x.Remove("binlog.000001", "nope"); n != 1 || len(x.Segments) != 1 || x.Segments[0].Name != "binlog.000002" {
		t.Errorf("remove: %d removed, left %+v", n, x.Segments)
	}
	empty, err := objectstore.DecodeIndex([]byte(`{"schemaVersion":1}`))
	if err != nil || empty.Segments == nil {
		t.Errorf("index without segments: %+v, %v", empty, err)
	}
}

func TestIndexValidate(t *testing.T) {
	for _, tc := range []struct {
		rule   string
		change func(*objectstore.Index)
	}{
		{"unknown schema version", func(x *objectstore.Index) { x.SchemaVersion = 2 }},
		{"duplicate name", func(x *objectstore.Index) { x.Segments = append(x.Segments, x.Segments[0]) }},
		{"empty name", func(x *objectstore.Index) { x.Segments[0].Name = "" }},
		{"reserved name", func(x *objectstore.Index) { x.Segments[0].Name = "_index.json" }},
		{"escaping name", func(x *objectstore.Index) { x.Segments[0].Name = "../pc2/binlog.1" }},
		{"absolute name", func(x *objectstore.Index) { x.Segments[0].Name = "/binlog.1" }},
		{"negative size", func(x *objectstore.Index) { x.Segments[0].Size = -1 }},
		{"bad sha256", func(x *objectstore.Index) { x.Segments[0].SHA256 = "xyz" }},
		{"last event before first", func(x *objectstore.Index) {
			x.Segments[0].LastEventTime = x.Segments[0].FirstEventTime.Add(-time.Second)
		}},
	} {
		x := objectstore.NewIndex()
		x.Upsert(segment("server-a/binlog.000001"))
		tc.change(x)
		if _, err := x.Encode(); !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.rule, err)
		}
	}
}
