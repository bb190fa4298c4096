package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ErrNoBackup: the object store holds no complete backup to restore.
var ErrNoBackup = errors.New("no complete backup")

// Newest returns the backup that ended last (stoppedAt, then startedAt, then the directory name
// as the tie-break, so the choice never depends on listing order); nil for none.
func Newest(backups []*objectstore.Metadata) *objectstore.Metadata {
	var best *objectstore.Metadata
	for _, md := range backups {
		if best == nil || newer(md, best) {
			best = md
		}
	}
	return best
}

func newer(a, b *objectstore.Metadata) bool {
	switch {
	case !a.StoppedAt.Equal(b.StoppedAt):
		return a.StoppedAt.After(b.StoppedAt)
	case !a.StartedAt.Equal(b.StartedAt):
		return a.StartedAt.After(b.StartedAt)
	}
	ak, bk := a.BackupName+"/"+a.BackupID, b.BackupName+"/"+b.BackupID
	return ak > bk
}

// LocateNewest finds the newest complete backup of cluster in store (LocateAll, then Newest).
func LocateNewest(ctx context.Context, store objectstore.Store, cluster string) (*objectstore.Metadata, error) {
	found, err := LocateAll(ctx, store, cluster)
	if err != nil {
		return nil, err
	}
	return Newest(found), nil
}

// LocateAll reads the metadata of every complete backup of cluster in store through the object
// layout: every backup directory holding a metadata.json is read, and those whose metadata.json
// is missing or unreadable are skipped (an interrupted upload, a foreign object). It returns
// ErrNoBackup, naming what it skipped, when nothing is left.
func LocateAll(ctx context.Context, store objectstore.Store, cluster string) ([]*objectstore.Metadata, error) {
	entries, err := store.ListBackups(ctx, cluster)
	if err != nil {
		return nil, err
	}
	var found []*objectstore.Metadata
	var skipped []string
	for _, e := range entries {
		if !e.Complete {
			skipped = append(skipped, e.Ref.Name+"/"+e.Ref.ID+" (no metadata.json)")
			continue
		}
		md, err := store.ReadMetadata(ctx, e.Ref)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			skipped = append(skipped, fmt.Sprintf("%s/%s (%v)", e.Ref.Name, e.Ref.ID, err))
			continue
		}
		found = append(found, md)
	}
	if len(found) > 0 {
		return found, nil
	}
	var why string
	if len(skipped) > 0 {
		why = "; skipped " + strings.Join(skipped, ", ")
	}
	return nil, fmt.Errorf("%w of cluster %s in the object store%s", ErrNoBackup, cluster, why)
}

// OfIncarnation keeps the backups the Cluster incarnation uid wrote (metadata.json's clusterUID);
// an empty uid keeps them all. It returns ErrNoBackup when uid wrote none of them.
func OfIncarnation(backups []*objectstore.Metadata, uid string) ([]*objectstore.Metadata, error) {
	if uid == "" {
		return backups, nil
	}
	var out []*objectstore.Metadata
	for _, md := range backups {
		if md.ClusterUID == uid {
			out = append(out, md)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w written by the Cluster incarnation %s (%d complete backup(s) of others)", ErrNoBackup, uid, len(backups))
	}
	return out, nil
}
