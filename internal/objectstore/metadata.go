package objectstore

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// MetadataSchemaVersion is the version of metadata.json this package writes and reads. Fields may
// be added within a version (readers ignore unknown fields); anything else bumps it, and readers
// refuse versions they do not know.
const MetadataSchemaVersion = 1

// Archive formats and compressions; together they give the archive's extension.
const (
	FormatTar       = "tar"
	FormatXbstream  = "xbstream"
	CompressionNone = "none"
	CompressionZstd = "zstd"
)

// maxDocumentSize bounds what is read back of metadata.json.
const maxDocumentSize = 1 << 20

// ArchiveExtension returns the extension of an archive: "tar", "tar.zst", "xbstream" or
// "xbstream.zst".
func ArchiveExtension(format, compression string) (string, error) {
	if format != FormatTar && format != FormatXbstream {
		return "", fmt.Errorf("%w: archive format %q (want %s or %s)", ErrInvalid, format, FormatTar, FormatXbstream)
	}
	switch compression {
	case CompressionNone:
		return format, nil
	case CompressionZstd:
		return format + ".zst", nil
	}
	return "", fmt.Errorf("%w: compression %q (want %s or %s)", ErrInvalid, compression, CompressionNone, CompressionZstd)
}

// Metadata is the content of metadata.json: what a restore needs to fetch, verify and check the
// archive, and what retention needs to order backups.
type Metadata struct {
	SchemaVersion int    `json:"schemaVersion"`
	Cluster       string `json:"cluster"`
	// Namespace is the Kubernetes namespace of the Cluster that took the backup. Empty in
	// backups written before it was recorded: such a backup belongs to whichever Cluster of that
	// name reads it.
	Namespace string `json:"namespace,omitempty"`
	// ClusterUID is the metadata.uid of the Cluster incarnation that took the backup. Empty in
	// backups written before it was recorded.
	ClusterUID     string    `json:"clusterUID,omitempty"`
	BackupName     string    `json:"backupName"`
	BackupID       string    `json:"backupId"`
	Method         string    `json:"method"`
	Format         string    `json:"format"`
	Compression    string    `json:"compression"`
	Size           int64     `json:"size"`   // bytes of the archive object
	SHA256         string    `json:"sha256"` // lowercase hex sha256 of the archive object
	GTIDExecuted   string    `json:"gtidExecuted"`
	BinlogFile     string    `json:"binlogFile,omitempty"`
	BinlogPosition int64     `json:"binlogPosition,omitempty"`
	ServerVersion  string    `json:"serverVersion"`
	StartedAt      time.Time `json:"startedAt"`
	StoppedAt      time.Time `json:"stoppedAt"`
}

// Ref returns the reference of the backup the metadata describes.
func (m *Metadata) Ref() BackupRef {
	return BackupRef{Cluster: m.Cluster, Name: m.BackupName, ID: m.BackupID}
}

// ArchiveExtension returns the extension of the backup's archive.
func (m *Metadata) ArchiveExtension() (string, error) {
	return ArchiveExtension(m.Format, m.Compression)
}

// Checksum returns the archive checksum as recorded in a Backup's status, "sha256:<hex>".
func (m *Metadata) Checksum() string { return "sha256:" + m.SHA256 }

// Validate checks every field a restore relies on.
func (m *Metadata) Validate() error {
	if m.SchemaVersion != MetadataSchemaVersion {
		return fmt.Errorf("%w: metadata schema version %d (want %d)", ErrInvalid, m.SchemaVersion, MetadataSchemaVersion)
	}
	if err := m.Ref().Validate(); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if m.Namespace != "" && !isDNSLabel(m.Namespace) {
		return fmt.Errorf("%w: metadata namespace %q is not a namespace name", ErrInvalid, m.Namespace)
	}
	if m.Method != string(v1alpha1.BackupMethodClone) && m.Method != string(v1alpha1.BackupMethodXtraBackup) {
		return fmt.Errorf("%w: metadata method %q", ErrInvalid, m.Method)
	}
	if _, err := m.ArchiveExtension(); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	switch {
	case m.Size <= 0:
		return fmt.Errorf("%w: metadata size %d", ErrInvalid, m.Size)
	case !isSHA256Hex(m.SHA256):
		return fmt.Errorf("%w: metadata sha256 %q is not 64 lowercase hex digits", ErrInvalid, m.SHA256)
	case m.ServerVersion == "":
		return fmt.Errorf("%w: metadata serverVersion is empty", ErrInvalid)
	case m.BinlogPosition < 0:
		return fmt.Errorf("%w: metadata binlogPosition %d", ErrInvalid, m.BinlogPosition)
	case m.StartedAt.IsZero() || m.StoppedAt.IsZero():
		return fmt.Errorf("%w: metadata startedAt or stoppedAt is missing", ErrInvalid)
	case m.StoppedAt.Before(m.StartedAt):
		return fmt.Errorf("%w: metadata stoppedAt %s is before startedAt %s", ErrInvalid,
			m.StoppedAt.Format(time.RFC3339), m.StartedAt.Format(time.RFC3339))
	}
	return nil
}

// Encode validates the metadata and returns its JSON document, times in UTC.
func (m *Metadata) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	out := *m
	out.StartedAt, out.StoppedAt = m.StartedAt.UTC(), m.StoppedAt.UTC()
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding metadata: %w", err)
	}
	return append(data, '\n'), nil
}

// DecodeMetadata parses and validates a metadata.json document. It refuses a schema version it
// does not know.
func DecodeMetadata(data []byte) (*Metadata, error) {
	if err := checkSchemaVersion(data, "metadata", MetadataSchemaVersion); err != nil {
		return nil, err
	}
	m := &Metadata{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: decoding metadata: %w", ErrInvalid, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkSchemaVersion reads only the schemaVersion of a document, so that a newer document is
// refused for its version rather than for a field it changed.
func checkSchemaVersion(data []byte, what string, want int) error {
	var probe struct {
		SchemaVersion int `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("%w: decoding %s: %w", ErrInvalid, what, err)
	}
	switch {
	case probe.SchemaVersion == 0:
		return fmt.Errorf("%w: %s has no schemaVersion", ErrInvalid, what)
	case probe.SchemaVersion != want:
		return fmt.Errorf("%w: %s schema version %d is not %d, the one this version understands",
			ErrInvalid, what, probe.SchemaVersion, want)
	}
	return nil
}

// BelongsTo reports whether the backup is one of the Cluster of that namespace: it names that
// namespace, or none (written before the namespace was recorded).
func (m *Metadata) BelongsTo(namespace string) bool {
	return m.Namespace == "" || m.Namespace == namespace
}

// isDNSLabel reports whether s is an RFC 1123 label, as namespace names are.
func isDNSLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
