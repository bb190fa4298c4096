package restore

import (
	"context"
	"sync"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Catalog lists the complete backups of a cluster again and again, reading each metadata.json
// once: a complete backup's metadata never changes, so only new backups cost a read.
type Catalog struct {
	Store   objectstore.Store
	Cluster string

	mu    sync.Mutex
	known map[objectstore.BackupRef]*objectstore.Metadata
}

// List returns the metadata of every complete backup the store holds now (none is not an error).
// A metadata.json that cannot be read is skipped, as LocateAll skips it.
func (c *Catalog) List(ctx context.Context) ([]*objectstore.Metadata, error) {
	entries, err := c.Store.ListBackups(ctx, c.Cluster)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known = map[objectstore.BackupRef]*objectstore.Metadata{}
	}
	seen := make(map[objectstore.BackupRef]bool, len(entries))
	var out []*objectstore.Metadata
	for _, e := range entries {
		if !e.Complete {
			continue
		}
		seen[e.Ref] = true
		md, ok := c.known[e.Ref]
		if !ok {
			if md, err = c.Store.ReadMetadata(ctx, e.Ref); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			c.known[e.Ref] = md
		}
		out = append(out, md)
	}
	for ref := range c.known { // deleted backups are forgotten
		if !seen[ref] {
			delete(c.known, ref)
		}
	}
	return out, nil
}
