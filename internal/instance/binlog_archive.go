package instance

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	driver "github.com/go-sql-driver/mysql"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// archiveMetrics are registered once per process (a test runs several instance managers).
var archiveMetrics = sync.OnceValue(func() *binlogarchive.Metrics { return binlogarchive.NewMetrics(ctrlmetrics.Registry) })

// startBinlogArchiver runs the continuous binlog archiver until ctx ends when the Cluster has an
// object store. It archives only while this instance is the primary, not fenced or demoted, and
// holds the Lease; on every other instance it stands by.
func (m *manager) startBinlogArchiver(ctx context.Context, wg *sync.WaitGroup, cluster *v1alpha1.Cluster, lease *PrimaryLease) {
	if cluster.Spec.Backup == nil || cluster.Spec.Backup.ObjectStore == nil {
		return
	}
	wg.Go(func() { m.runBinlogArchiver(ctx, lease) })
}

func (m *manager) runBinlogArchiver(ctx context.Context, lease *PrimaryLease) {
	log := m.deps.Log.WithName("binlog-archiver")
	// root has the Cluster's password (the first primary sets it), as for the manager's own
	// connections.
	rootPassword, err := m.readPassword(ctx, specs.UserRoot)
	if err != nil {
		log.Error(err, "the binlog archiver cannot start")
		return
	}
	dsn := driver.NewConfig()
	dsn.User, dsn.Passwd, dsn.Net, dsn.Addr = specs.UserRoot, rootPassword, "unix", m.cfg.socketPath()
	connector, err := driver.NewConnector(dsn)
	if err != nil {
		log.Error(err, "the binlog archiver cannot start")
		return
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(2)
	var timeout atomic.Int64
	timeout.Store(int64(v1alpha1.DefaultArchiveTimeout))
	a := &binlogarchive.Archiver{
		Server: binlogarchive.Server{DB: db}, Cluster: m.cfg.Cluster, BinlogDir: m.cfg.DataDir,
		ArchiveTimeout: func() time.Duration { return time.Duration(timeout.Load()) },
		KeepLocal:      -1, Clock: m.deps.Clock, Metrics: archiveMetrics(), Log: log,
	}
	a.Role = func(ctx context.Context) (binlogarchive.Role, error) {
		c := &v1alpha1.Cluster{}
		if err := m.deps.Client.Get(ctx, m.cluster, c); err != nil {
			return binlogarchive.Role{}, err
		}
		timeout.Store(int64(c.Spec.Backup.ArchiveTimeoutOrDefault()))
		st := &c.Status
		return binlogarchive.Role{
			Primary: st.CurrentPrimary == m.cfg.Instance && st.TargetPrimary == m.cfg.Instance,
			Fenced:  slices.Contains(st.FencedInstances, m.cfg.Instance), Demoted: lease.Demoted(),
			LeaseRequired: lease.Enabled(), LeaseHeld: lease.Held(), Writable: true,
			Dir: c.ObjectStoreDirName(), LocationNotHeld: locationNotHeld(c), LocationInUse: locationInUse(c),
		}, nil
	}
	reporter := binlogarchive.ClusterReporter{Client: m.deps.Client, Cluster: m.cluster, Instance: m.cfg.Instance, Clock: m.deps.Clock}
	a.Report = func(ctx context.Context, h binlogarchive.Health) {
		if err := reporter.Report(ctx, h); err != nil {
			log.Error(err, "reporting the archiver's health")
		}
	}
	store := &archiveStoreSource{resolve: m.archiveStoreConfig, open: objectstore.New, clock: m.deps.Clock}
	a.Store = store
	reporter.Backups = func(ctx context.Context) ([]*objectstore.Metadata, error) {
		c, err := store.current(ctx)
		if err != nil {
			return nil, err
		}
		return (&restore.Catalog{Store: c, Cluster: a.Dir()}).List(ctx)
	}
	a.ReportStatus = func(ctx context.Context, h binlogarchive.Health, index *objectstore.Index) {
		if err := reporter.ReportStatus(ctx, h, index); err != nil {
			log.Error(err, "reporting the archive's status")
		}
	}
	a.Run(ctx)
}

// archiveStoreConfig reads the Cluster's object store configuration and its Secrets (which only
// the target primary may read, specs.BuildPrimaryRole).
func (m *manager) archiveStoreConfig(ctx context.Context) (objectstore.Config, error) {
	c := &v1alpha1.Cluster{}
	if err := m.deps.Client.Get(ctx, m.cluster, c); err != nil {
		return objectstore.Config{}, err
	}
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return objectstore.Config{}, fmt.Errorf("%w: the Cluster no longer has an object store", objectstore.ErrInvalid)
	}
	spec := c.Spec.Backup.ObjectStore
	secrets, err := objectstore.ReadSecrets(ctx, m.deps.Client, m.cfg.Namespace, spec)
	if err != nil {
		return objectstore.Config{}, err
	}
	return objectstore.ResolveConfig(spec, secrets)
}

// locationNotHeld says why the Cluster does not hold its object store location, as the
// operator recorded it (status.objectStoreLocation); "" when it holds it.
func locationNotHeld(c *v1alpha1.Cluster) string {
	if c.HoldsObjectStoreLocation() {
		return ""
	}
	st := c.Status.ObjectStoreLocation
	switch {
	case c.ObjectStoreLocation() == "":
		return "the Cluster has no object store"
	case st == nil || st.Location != c.ObjectStoreLocation():
		return "the operator has not claimed " + c.ObjectStoreLocation() + " for this Cluster yet"
	}
	return st.Location + " (" + string(st.Phase) + "): " + st.Message
}

// locationInUse says the operator found the Cluster's location held by another incarnation.
func locationInUse(c *v1alpha1.Cluster) bool {
	st := c.Status.ObjectStoreLocation
	return st != nil && st.Phase == v1alpha1.LocationInUse && st.Location == c.ObjectStoreLocation()
}
