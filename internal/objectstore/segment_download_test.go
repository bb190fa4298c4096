package objectstore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

func TestDownloadSegmentChecksTheIndexEntry(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	body := bytes.Repeat([]byte("\xfebin segment "), 1000)
	sum := sha256.Sum256(body)
	seg := objectstore.Segment{Name: "uuid/first_last_digest_binlog.000001", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}
	if err := client.PutSegment(t.Context(), "c1", seg.Name, bytes.NewReader(body), seg.Size); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := client.DownloadSegment(t.Context(), "c1", seg, &out); err != nil || !bytes.Equal(out.Bytes(), body) {
		t.Fatalf("download: %v, %d bytes (want %d)", err, out.Len(), len(body))
	}
	for _, tc := range []struct {
		rule string
		seg  objectstore.Segment
		want error
	}{
		{"another sha256 in the index is a mismatch", objectstore.Segment{Name: seg.Name, Size: seg.Size, SHA256: hex.EncodeToString(make([]byte, 32))}, objectstore.ErrChecksumMismatch},
		{"a shorter size in the index is a mismatch", objectstore.Segment{Name: seg.Name, Size: seg.Size - 1, SHA256: seg.SHA256}, objectstore.ErrChecksumMismatch},
		{"a longer size in the index is a mismatch", objectstore.Segment{Name: seg.Name, Size: seg.Size + 1, SHA256: seg.SHA256}, objectstore.ErrChecksumMismatch},
		{"a missing object is not found", objectstore.Segment{Name: "uuid/missing", Size: seg.Size, SHA256: seg.SHA256}, objectstore.ErrNotFound},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var out bytes.Buffer
			if err := client.DownloadSegment(t.Context(), "c1", tc.seg, &out); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
