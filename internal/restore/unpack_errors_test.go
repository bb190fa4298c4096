package restore

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// failAfter returns data, then err.
type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

func TestReadErrorsKeepsTheFirstReadError(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  io.Reader
		want error
	}{
		{"a reader that ends cleanly records nothing", bytes.NewReader([]byte("abc")), nil},
		{"a checksum mismatch at the end is recorded", &failAfter{bytes.NewReader([]byte("abc")), objectstore.ErrChecksumMismatch},
			objectstore.ErrChecksumMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &readErrors{r: tc.src}
			_, _ = io.Copy(io.Discard, r)
			if !errors.Is(r.err, tc.want) || (tc.want == nil) != (r.err == nil) {
				t.Errorf("recorded %v, want %v", r.err, tc.want)
			}
		})
	}
}
