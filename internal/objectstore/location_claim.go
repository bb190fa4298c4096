package objectstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
)

// ClaimName is the marker that says which Cluster incarnation a location (<path>/<dir>/) belongs
// to. A Backup's name cannot start with '_', so it never collides with a backup directory.
const ClaimName = "_location.json"

// ClaimSchemaVersion is the version of the marker this package writes and reads.
const ClaimSchemaVersion = 1

// Claim is the content of a location's marker: the Cluster incarnation that backs up and archives
// there.
type Claim struct {
	SchemaVersion int    `json:"schemaVersion"`
	Cluster       string `json:"cluster"`
	Namespace     string `json:"namespace"`
	// UID is the Cluster's metadata.uid: a Cluster re-created with the same name is another
	// incarnation.
	UID       string    `json:"uid"`
	CreatedAt time.Time `json:"createdAt"` // the Cluster's creationTimestamp
	ClaimedAt time.Time `json:"claimedAt"`
	// RecoveredFrom is the backup directory the Cluster was restored from, if it was.
	RecoveredFrom string `json:"recoveredFrom,omitempty"`
	// Continues lists the incarnations whose history this one took over, oldest first.
	Continues []ClaimPredecessor `json:"continues,omitempty"`
}

// ClaimPredecessor is an earlier holder of the location whose history a Cluster continues.
type ClaimPredecessor struct {
	UID       string    `json:"uid"`
	Cluster   string    `json:"cluster"`
	Namespace string    `json:"namespace"`
	ClaimedAt time.Time `json:"claimedAt"`
}

// Holder returns "<namespace>/<cluster>".
func (c *Claim) Holder() string { return c.Namespace + "/" + c.Cluster }

// PredecessorUIDs returns the UIDs of Continues.
func (c *Claim) PredecessorUIDs() []string {
	out := make([]string, 0, len(c.Continues))
	for _, p := range c.Continues {
		out = append(out, p.UID)
	}
	return out
}

// ClaimKey returns the key of a location's marker, "<prefix>/<dir>/_location.json".
func ClaimKey(prefix, dir string) string { return ClusterDir(prefix, dir) + ClaimName }

// ReadClaim returns a location's marker and its ETag, or an error wrapping ErrNotFound when the
// location has none.
func (c *Client) ReadClaim(ctx context.Context, dir string) (*Claim, string, error) {
	if err := checkSegment(dir); err != nil {
		return nil, "", fmt.Errorf("%w: location %q: %w", ErrInvalid, dir, err)
	}
	key := ClaimKey(c.cfg.Path, dir)
	data, etag, err := c.readSmallObject(ctx, key, maxDocumentSize)
	if err != nil {
		return nil, "", err
	}
	var claim Claim
	if err := json.Unmarshal(data, &claim); err != nil {
		return nil, "", fmt.Errorf("%w: %s: %w", ErrInvalid, key, err)
	}
	if claim.SchemaVersion != ClaimSchemaVersion {
		return nil, "", fmt.Errorf("%w: %s has schemaVersion %d, this build reads %d", ErrInvalid, key, claim.SchemaVersion, ClaimSchemaVersion)
	}
	if claim.UID == "" {
		return nil, "", fmt.Errorf("%w: %s names no uid", ErrInvalid, key)
	}
	return &claim, etag, nil
}

// WriteClaim writes a location's marker only if the stored one still has the given ETag
// (If-Match), or, with etag "", only if there is none (If-None-Match: *): of two Clusters that
// claim a location at once, one gets an error wrapping ErrConflict. It returns the new ETag.
func (c *Client) WriteClaim(ctx context.Context, dir string, claim *Claim, etag string) (string, error) {
	if err := checkSegment(dir); err != nil {
		return "", fmt.Errorf("%w: location %q: %w", ErrInvalid, dir, err)
	}
	if claim.UID == "" {
		return "", fmt.Errorf("%w: a claim needs a uid", ErrInvalid)
	}
	claim.SchemaVersion = ClaimSchemaVersion
	data, err := json.MarshalIndent(claim, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the location claim: %w", err)
	}
	return c.putConditional(ctx, ClaimKey(c.cfg.Path, dir), data, etag)
}

// Contents summarises what a location holds besides its marker.
type Contents struct {
	// Objects is how many objects it holds (backups, binlog segments, the index, anything).
	Objects int
	// Oldest and Newest are the extreme modification times among them, as the store recorded.
	Oldest, Newest time.Time
	// Namespaces are the namespaces the complete backups' metadata.json record ("" for backups
	// that record none), each once; filled by ReadBackupOwners, like UIDs, BackupGTIDs and
	// Unreadable.
	Namespaces []string
	// UIDs are the Cluster UIDs the complete backups' metadata.json record, each once.
	UIDs []string
	// BackupGTIDs are the complete backups' gtidExecuted.
	BackupGTIDs []string
	// Unreadable counts complete backups whose metadata.json could not be decoded: their owner
	// is unknown.
	Unreadable int

	complete []BackupRef // the complete backups listed, for ReadBackupOwners
}

// Empty reports whether the location holds nothing besides its marker.
func (c Contents) Empty() bool { return c.Objects == 0 }

// LocationContents lists everything under a location's directory except its marker, once; the
// complete backups it saw are read by ReadBackupOwners when the caller needs their owners.
func (c *Client) LocationContents(ctx context.Context, dir string) (Contents, error) {
	if err := checkSegment(dir); err != nil {
		return Contents{}, fmt.Errorf("%w: location %q: %w", ErrInvalid, dir, err)
	}
	var out Contents
	prefix, marker := ClusterDir(c.cfg.Path, dir), ClaimKey(c.cfg.Path, dir)
	err := c.listKeys(ctx, prefix, "", func(obj minio.ObjectInfo) bool {
		if obj.Key == marker {
			return true
		}
		out.Objects++
		if out.Oldest.IsZero() || obj.LastModified.Before(out.Oldest) {
			out.Oldest = obj.LastModified
		}
		if obj.LastModified.After(out.Newest) {
			out.Newest = obj.LastModified
		}
		if ref, file, ok := parseBackupKey(dir, strings.TrimPrefix(obj.Key, prefix)); ok && file == MetadataName && ref.Name != BinlogDirName {
			out.complete = append(out.complete, ref)
		}
		return true
	})
	if err != nil {
		return Contents{}, fmt.Errorf("listing %s: %w", prefix, err)
	}
	return out, nil
}

// ReadBackupOwners reads the metadata.json of every complete backup LocationContents saw (one
// request each) into contents: their namespaces, Cluster UIDs and GTID sets, and how many cannot
// be decoded.
func (c *Client) ReadBackupOwners(ctx context.Context, contents *Contents) error {
	seenNS, seenUID := map[string]bool{}, map[string]bool{}
	for _, ref := range contents.complete {
		md, err := c.ReadMetadata(ctx, ref)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if errors.Is(err, ErrInvalid) {
			contents.Unreadable++
			continue
		}
		if err != nil {
			return err
		}
		contents.BackupGTIDs = append(contents.BackupGTIDs, md.GTIDExecuted)
		if !seenNS[md.Namespace] {
			seenNS[md.Namespace] = true
			contents.Namespaces = append(contents.Namespaces, md.Namespace)
		}
		if md.ClusterUID != "" && !seenUID[md.ClusterUID] {
			seenUID[md.ClusterUID] = true
			contents.UIDs = append(contents.UIDs, md.ClusterUID)
		}
	}
	return nil
}
