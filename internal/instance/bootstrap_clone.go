package instance

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// CloneFromDonor replaces the local, freshly initialized server's data with a copy of the donor's
// and waits until the supervisor has started mysqld again on it (mysqld stops itself after a
// clone). It returns the cloned gtid_executed: the point replication continues from. poll is
// the interval between readiness checks.
func CloneFromDonor(ctx context.Context, op mysql.Operator, donor mysql.Donor, poll time.Duration) (gtid.Set, error) {
	if err := op.Clone(ctx, donor); err != nil {
		return gtid.Set{}, err
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return gtid.Set{}, fmt.Errorf("waiting for mysqld to restart after the clone: %w", ctx.Err())
		case <-ticker.C:
		}
		st, err := op.Status(ctx)
		if err == nil {
			return st.GTIDExecuted, nil
		}
	}
}
