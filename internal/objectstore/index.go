package objectstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// IndexSchemaVersion is the version of _index.json this package writes and reads, with the same
// rules as MetadataSchemaVersion.
const IndexSchemaVersion = 1

// maxIndexSize bounds what is read back of _index.json: 100,000 segments take about 30 MiB,
// which a Cluster archiving a binlog every five minutes reaches in a year without retention.
// Reading an index holds about its size in memory (ReadIndexFrom), so the operator's two
// index readers (retention, the Backup finalizer) stay within its memory limit.
const maxIndexSize = 64 << 20

// Index is the content of a cluster's binlogs/_index.json: one entry per archived binlog
// segment, in the order the writers put them.
type Index struct {
	SchemaVersion int       `json:"schemaVersion"`
	Segments      []Segment `json:"segments"`
}

// Segment describes one archived binlog segment. A zero event time means unknown; retention
// keeps a segment whose last event time is unknown.
type Segment struct {
	// Name is the segment's key relative to the binlog directory.
	Name           string    `json:"name"`
	Size           int64     `json:"size"`
	FirstEventTime time.Time `json:"firstEventTime,omitzero"`
	LastEventTime  time.Time `json:"lastEventTime,omitzero"`
	// GTIDRange is the GTID set the segment contains, as MySQL prints it.
	GTIDRange string `json:"gtidRange,omitempty"`
	// PreviousGTIDs is the GTID set the server had executed before the segment's first
	// transaction (the binlog's Previous_gtids): a later segment whose PreviousGTIDs are not
	// covered by the archive reveals a gap.
	PreviousGTIDs string `json:"previousGtids,omitempty"`
	// SHA256 is the lowercase hex sha256 of the segment object.
	SHA256 string `json:"sha256"`
}

// NewIndex returns an empty index of the current schema version.
func NewIndex() *Index { return &Index{SchemaVersion: IndexSchemaVersion, Segments: []Segment{}} }

// Validate checks the version, each segment and that names are unique.
func (x *Index) Validate() error {
	if x.SchemaVersion != IndexSchemaVersion {
		return fmt.Errorf("%w: index schema version %d (want %d)", ErrInvalid, x.SchemaVersion, IndexSchemaVersion)
	}
	seen := make(map[string]bool, len(x.Segments))
	for i := range x.Segments {
		s := &x.Segments[i]
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: index lists segment %q twice", ErrInvalid, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Validate checks one segment.
func (s *Segment) Validate() error {
	if err := checkSegmentName(s.Name); err != nil {
		return fmt.Errorf("%w: segment name %q: %w", ErrInvalid, s.Name, err)
	}
	switch {
	case s.Size < 0:
		return fmt.Errorf("%w: segment %q size %d", ErrInvalid, s.Name, s.Size)
	case !isSHA256Hex(s.SHA256):
		return fmt.Errorf("%w: segment %q sha256 %q is not 64 lowercase hex digits", ErrInvalid, s.Name, s.SHA256)
	case !s.FirstEventTime.IsZero() && !s.LastEventTime.IsZero() && s.LastEventTime.Before(s.FirstEventTime):
		return fmt.Errorf("%w: segment %q last event precedes its first", ErrInvalid, s.Name)
	}
	return nil
}

// checkSegmentName accepts a relative key of safe segments that does not start with '_', which
// is reserved for the index and files like it.
func checkSegmentName(name string) error {
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("names starting with '_' are reserved")
	}
	for _, seg := range strings.Split(name, "/") {
		if err := checkSegment(seg); err != nil {
			return err
		}
	}
	return nil
}

// Find returns the segment with that name.
func (x *Index) Find(name string) (Segment, bool) {
	for _, s := range x.Segments {
		if s.Name == name {
			return s, true
		}
	}
	return Segment{}, false
}

// Upsert replaces the segment of the same name, or appends it. Applying it twice is harmless,
// as UpdateIndex requires of a mutation.
func (x *Index) Upsert(seg Segment) {
	for i := range x.Segments {
		if x.Segments[i].Name == seg.Name {
			x.Segments[i] = seg
			return
		}
	}
	x.Segments = append(x.Segments, seg)
}

// Remove drops the named segments and returns how many it dropped.
func (x *Index) Remove(names ...string) int {
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	kept := x.Segments[:0]
	for _, s := range x.Segments {
		if !drop[s.Name] {
			kept = append(kept, s)
		}
	}
	removed := len(x.Segments) - len(kept)
	x.Segments = kept
	return removed
}

// Encode validates the index and returns its JSON document, times in UTC. The same index always
// encodes to the same bytes.
func (x *Index) Encode() ([]byte, error) {
	if err := x.Validate(); err != nil {
		return nil, err
	}
	out := Index{SchemaVersion: x.SchemaVersion, Segments: make([]Segment, len(x.Segments))}
	for i, s := range x.Segments {
		s.FirstEventTime, s.LastEventTime = s.FirstEventTime.UTC(), s.LastEventTime.UTC()
		out.Segments[i] = s
	}
	data, err := json.Marshal(&out)
	if err != nil {
		return nil, fmt.Errorf("encoding the binlog index: %w", err)
	}
	return append(data, '\n'), nil
}

// DecodeIndex parses and validates an _index.json document. It refuses a schema version it does
// not know.
func DecodeIndex(data []byte) (*Index, error) { return ReadIndexFrom(bytes.NewReader(data)) }

// ReadIndexFrom parses and validates an _index.json document from r one segment at a time, so
// that reading an index holds its segments and never the document besides. It refuses a schema
// version it does not know, as soon as it reads it (before the segments, where Encode writes it).
func ReadIndexFrom(r io.Reader) (*Index, error) {
	dec := json.NewDecoder(r)
	x := &Index{Segments: []Segment{}}
	versionChecked := false
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidIndex(err)
		}
		switch key, _ := tok.(string); key {
		case "schemaVersion":
			if err := dec.Decode(&x.SchemaVersion); err != nil {
				return nil, invalidIndex(err)
			}
			if err := checkIndexVersion(x.SchemaVersion); err != nil {
				return nil, err
			}
			versionChecked = true
		case "segments":
			if err := decodeSegments(dec, x); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage // an unknown field, as json.Unmarshal ignores it
			if err := dec.Decode(&skip); err != nil {
				return nil, invalidIndex(err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidIndex(fmt.Errorf("data after the document"))
	}
	if !versionChecked {
		if err := checkIndexVersion(x.SchemaVersion); err != nil {
			return nil, err
		}
	}
	if err := x.Validate(); err != nil {
		return nil, err
	}
	return x, nil
}

// decodeSegments decodes the segments array (or null) element by element.
func decodeSegments(dec *json.Decoder, x *Index) error {
	tok, err := dec.Token()
	if err != nil {
		return invalidIndex(err)
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return invalidIndex(fmt.Errorf("segments is not an array"))
	}
	for dec.More() {
		var seg Segment
		if err := dec.Decode(&seg); err != nil {
			return invalidIndex(err)
		}
		x.Segments = append(x.Segments, seg)
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return invalidIndex(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return invalidIndex(fmt.Errorf("want %q, got %v", want, tok))
	}
	return nil
}

func invalidIndex(err error) error {
	return fmt.Errorf("%w: decoding the binlog index: %w", ErrInvalid, err)
}

func checkIndexVersion(v int) error {
	switch {
	case v == 0:
		return fmt.Errorf("%w: binlog index has no schemaVersion", ErrInvalid)
	case v != IndexSchemaVersion:
		return fmt.Errorf("%w: binlog index schema version %d is not %d, the one this version understands",
			ErrInvalid, v, IndexSchemaVersion)
	}
	return nil
}
