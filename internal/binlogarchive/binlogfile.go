package binlogarchive

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Binary log format (v4): a 4-byte magic number, then events, each with a 19-byte header:
// timestamp (4), type (1), server id (4), event size (4), next position (4), flags (2).
const (
	binlogMagic      = "\xfebin"
	eventHeaderSize  = 19
	typeGTID         = 33 // Gtid_log_event
	typeGTIDTagged   = 42 // Gtid_tagged_log_event (MySQL 8.3+)
	commitStampsAt   = 42 // offset in a Gtid_log_event's body of immediate_commit_timestamp
	commitStampSize  = 7
	originalStampBit = uint64(1) << 55
)

// FileSummary is what reading a binlog file yields.
type FileSummary struct {
	Size       int64
	SHA256     string
	FirstEvent time.Time // commit time of the first transaction; zero when none
	LastEvent  time.Time // commit time of the last transaction; zero when none
}

// SummarizeFile reads the binlog at path up to limit bytes (the whole file when limit < 0) and
// returns its size, sha256 and the commit times of its first and last transactions. An event cut
// by limit or by the end of a file still being written ends the scan; what was read is hashed.
func SummarizeFile(path string, limit int64) (FileSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileSummary{}, err
	}
	defer f.Close()
	var src io.Reader = f
	if limit >= 0 {
		src = io.LimitReader(f, limit)
	}
	h := sha256.New()
	counted := &countingReader{r: io.TeeReader(src, h)}
	first, last, err := scanCommitTimes(bufio.NewReaderSize(counted, 1<<16))
	if err != nil {
		return FileSummary{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if _, err := io.Copy(io.Discard, counted); err != nil { // hash the rest
		return FileSummary{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return FileSummary{Size: counted.n, SHA256: hex.EncodeToString(h.Sum(nil)), FirstEvent: first, LastEvent: last}, nil
}

// scanCommitTimes walks the events and returns the first and last transaction commit times. The
// commit time is the GTID event's original_commit_timestamp (microseconds), or its
// immediate_commit_timestamp, or its header's timestamp (seconds) for a tagged GTID event.
func scanCommitTimes(r *bufio.Reader) (first, last time.Time, err error) {
	magic := make([]byte, len(binlogMagic))
	if _, err := io.ReadFull(r, magic); err != nil {
		return first, last, fmt.Errorf("no binlog header: %w", err)
	}
	if string(magic) != binlogMagic {
		return first, last, errors.New("not a binary log (bad magic number)")
	}
	header := make([]byte, eventHeaderSize)
	body := make([]byte, 0, 256)
	for {
		if _, err := io.ReadFull(r, header); err != nil {
			return first, last, nil // end of file, or an event still being written
		}
		size := int64(binary.LittleEndian.Uint32(header[9:13]))
		if size < eventHeaderSize {
			return first, last, fmt.Errorf("event of size %d", size)
		}
		kind := header[4]
		rest := size - eventHeaderSize
		if kind != typeGTID && kind != typeGTIDTagged {
			if _, err := r.Discard(int(rest)); err != nil {
				return first, last, nil
			}
			continue
		}
		body = body[:0]
		body = append(body, make([]byte, rest)...)
		if _, err := io.ReadFull(r, body); err != nil {
			return first, last, nil
		}
		at := commitTime(kind, header, body)
		if first.IsZero() {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
}

func commitTime(kind byte, header, body []byte) time.Time {
	seconds := time.Unix(int64(binary.LittleEndian.Uint32(header[0:4])), 0).UTC()
	if kind != typeGTID || len(body) < commitStampsAt+commitStampSize {
		return seconds
	}
	stamp := readUint56(body[commitStampsAt:])
	if stamp&originalStampBit != 0 && len(body) >= commitStampsAt+2*commitStampSize {
		stamp = readUint56(body[commitStampsAt+commitStampSize:]) // original_commit_timestamp
	}
	stamp &^= originalStampBit
	if stamp == 0 {
		return seconds
	}
	return time.UnixMicro(int64(stamp)).UTC()
}

func readUint56(b []byte) uint64 {
	var v uint64
	for i := commitStampSize - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
