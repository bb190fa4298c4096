package backup

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ErrLocationNotHeld: the location's marker does not name the Cluster incarnation the Job backs
// up, so the backup is not written there.
var ErrLocationNotHeld = errors.New("ObjectStoreInUse: the object store location is not held by this Cluster")

// checkClaim refuses a backup into a location whose marker does not name uid. An empty uid (a
// Job of an earlier operator) checks nothing.
func checkClaim(ctx context.Context, store *objectstore.Client, dir, uid string) error {
	if uid == "" {
		return nil
	}
	claim, _, err := store.ReadClaim(ctx, dir)
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		return fmt.Errorf("%w: %s has no marker yet", ErrLocationNotHeld, objectstore.ClusterDir(store.Config().Path, dir))
	case err != nil:
		return fmt.Errorf("reading the location's marker: %w", err)
	case claim.UID != uid:
		return fmt.Errorf("%w: %s belongs to %s (uid %s), this Cluster is uid %s", ErrLocationNotHeld,
			objectstore.ClusterDir(store.Config().Path, dir), claim.Holder(), claim.UID, uid)
	}
	return nil
}
