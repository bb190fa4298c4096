package binlogarchive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// ErrNotHeld is returned by a pass of a primary whose Cluster does not hold its object store
// location: another incarnation's archive is neither read nor written.
var ErrNotHeld = errors.New("the object store location is not held by this Cluster: archiving refused")

// ErrFork is returned by a pass that found archived transactions the server never executed.
var ErrFork = errors.New("the archive holds transactions this server never executed (a fork): archiving refused")

// Store is the part of the object store the archiver uses.
type Store interface {
	ReadIndex(ctx context.Context, cluster string) (*objectstore.Index, string, error)
	UpdateIndex(ctx context.Context, cluster string, mutate func(*objectstore.Index) error) (*objectstore.Index, error)
	PutSegment(ctx context.Context, cluster, name string, r io.Reader, size int64) error
}

// Health is what a pass reports: whether archiving keeps up, and why not.
type Health struct {
	// OK is false after a failed pass, a fork or a gap.
	OK      bool
	Reason  string // CamelCase, for a condition and an Event
	Message string
	// StandDown is set while the instance does not archive.
	StandDown   string
	Lag         time.Duration
	Backlog     int
	LastSegment string
}

// Health reasons.
const (
	HealthArchiving  = "Archiving"
	HealthStandingBy = "StandingDown"
	HealthFailed     = "ArchiveFailed"
	HealthFork       = "ArchiveFork"
	HealthGap        = "ArchiveGap"
	HealthNotHeld    = "ObjectStoreNotHeld"
	defaultInterval  = time.Second
	// defaultStatusEvery spaces the archiver's status writes on its Cluster.
	defaultStatusEvery = 15 * time.Second
	defaultKeepLocalS  = -1
)

// Archiver archives the binary logs of its server while Role says it is the primary.
type Archiver struct {
	Server Server
	Store  Store
	// Cluster names the cluster's directory in the object store, unless Role names another.
	Cluster string
	// BinlogDir is the directory of the binlog files as the archiver sees it.
	BinlogDir string
	// Role tells the archiver whether it may archive.
	Role func(ctx context.Context) (Role, error)
	// ArchiveTimeout returns the Cluster's archiveTimeout (read at each pass).
	ArchiveTimeout func() time.Duration
	// KeepLocal is how long an archived binlog stays; negative: binlog_expire_logs_seconds.
	KeepLocal time.Duration
	Interval  time.Duration
	Clock     clock.Clock
	Metrics   *Metrics
	// Report, when set, is called after every pass whose Health differs from the last one.
	Report func(ctx context.Context, h Health)
	// ReportStatus, when set, is called with the Health and the index read after a pass of the
	// primary, at most every StatusEvery (15 s when zero).
	ReportStatus func(ctx context.Context, h Health, index *objectstore.Index)
	StatusEvery  time.Duration
	Log          logr.Logger

	autoPurgeOff bool
	dir          atomic.Value // string: the directory the last pass used
	lastSegment  string
	lastHealth   *Health
	index        *objectstore.Index // as the last gather read it
	lastStatus   time.Time
}

// Dir is the directory in the object store the archiver archives to (the last pass's).
func (a *Archiver) Dir() string {
	if d, ok := a.dir.Load().(string); ok && d != "" {
		return d
	}
	return a.Cluster
}

// Run runs a pass every Interval until ctx ends.
func (a *Archiver) Run(ctx context.Context) {
	interval := a.Interval
	if interval <= 0 {
		interval = defaultInterval
	}
	for {
		if _, err := a.Pass(ctx); err != nil && ctx.Err() == nil {
			a.Log.Error(err, "binlog archiver pass failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-a.Clock.After(interval):
		}
	}
}

// Pass gathers, decides and acts once, reports the outcome and returns the decision.
func (a *Archiver) Pass(ctx context.Context) (Decision, error) {
	d, err := a.pass(ctx)
	a.record(ctx, d, err)
	return d, err
}

func (a *Archiver) pass(ctx context.Context) (Decision, error) {
	role, err := a.Role(ctx)
	if err != nil {
		return Decision{}, stageError(stageRole, err)
	}
	if why := standDown(Observation{Role: role, Binlogs: []Binlog{{}}}); why != "" {
		if why == ReasonNotPrimary && a.autoPurgeOff { // a replica again: mysqld purges as usual
			if err := a.Server.EnableAutoPurge(ctx); err != nil {
				return Decision{StandDown: why}, stageError(stageMySQL, err)
			}
			a.autoPurgeOff = false
		}
		return Decision{StandDown: why}, nil // no object store request while standing down
	}
	a.dir.Store(cmp.Or(role.Dir, a.Cluster))
	if role.LocationNotHeld != "" {
		a.index = nil // nothing of another incarnation's archive is reported
		switch {
		case role.LocationInUse && a.autoPurgeOff:
			// Nothing will archive these binlogs until a user acts (the Cluster is Degraded): keep
			// them no longer than mysqld's binlog_expire_logs_seconds rather than fill the disk.
			if err := a.Server.EnableAutoPurge(ctx); err != nil {
				return Decision{}, stageError(stageMySQL, err)
			}
			a.autoPurgeOff = false
		case !role.LocationInUse && !a.autoPurgeOff:
			// The claim is pending: the binlogs wait for it, as they wait for a store that fails.
			if err := a.Server.DisableAutoPurge(ctx); err != nil {
				return Decision{}, stageError(stageMySQL, err)
			}
			a.autoPurgeOff = true
		}
		return Decision{}, stageError(stageLocation, fmt.Errorf("%w: %s", ErrNotHeld, role.LocationNotHeld))
	}
	o, uuid, err := a.gather(ctx, role)
	if err != nil {
		return Decision{}, err
	}
	d := Decide(o)
	if err := a.act(ctx, o, d, uuid); err != nil || !d.Rotate {
		return d, err
	}
	// The binlog just closed is archived at once rather than a pass later.
	if o, uuid, err = a.gather(ctx, role); err != nil {
		return d, err
	}
	d = Decide(o)
	d.Rotate = false
	return d, a.act(ctx, o, d, uuid)
}

type stagedError struct {
	stage string
	err   error
}

func (e *stagedError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stagedError) Unwrap() error { return e.err }

func stageError(stage string, err error) error { return &stagedError{stage: stage, err: err} }

// The stages a pass fails at, the label of cnm_binlog_archive_failures_total.
const (
	stageBinlog   = "binlog"
	stageIndex    = "index"
	stageLocation = "location"
	stageMySQL    = "mysql"
	stageRole     = "role"
	stageUpload   = "upload"
	stageFork     = "fork"
)

// failureStages are every stage, whose failure counters exist from the start at 0: a rule on
// increase() sees the first failure, and a dashboard finds the series.
var failureStages = []string{stageBinlog, stageIndex, stageLocation, stageMySQL, stageRole, stageUpload, stageFork}

// gather observes the server, its binlog files and the archive's index.
func (a *Archiver) gather(ctx context.Context, role Role) (Observation, string, error) {
	o := Observation{Now: a.Clock.Now(), Role: role, ArchiveTimeout: a.ArchiveTimeout(), KeepLocal: a.KeepLocal}
	if !a.autoPurgeOff {
		if err := a.Server.DisableAutoPurge(ctx); err != nil {
			return o, "", stageError(stageMySQL, err)
		}
		a.autoPurgeOff = true
	}
	if o.KeepLocal < 0 {
		secs, err := a.Server.ExpireSeconds(ctx)
		if err != nil {
			return o, "", stageError(stageMySQL, err)
		}
		o.KeepLocal = time.Duration(secs) * time.Second
	}
	listed, err := a.Server.BinaryLogs(ctx)
	if err != nil {
		return o, "", stageError(stageMySQL, err)
	}
	uuid, executed, writable, err := a.Server.Identity(ctx)
	if err != nil {
		return o, "", stageError(stageMySQL, err)
	}
	o.Executed, o.Role.Writable = executed, o.Role.Writable && writable
	index, _, err := a.Store.ReadIndex(ctx, a.Dir())
	if err != nil {
		return o, "", stageError(stageIndex, err)
	}
	a.index = index
	o.ArchiveEmpty = len(index.Segments) == 0
	if o.Archived, o.Covered, err = archiveSets(index); err != nil {
		return o, "", stageError(stageIndex, err)
	}
	o.Binlogs, err = a.observeBinlogs(ctx, listed, executed, o.Archived)
	if err != nil {
		return o, "", err
	}
	return o, uuid, nil
}

// archiveSets returns the union of the segments' GTID sets and of their Previous_gtids.
func archiveSets(index *objectstore.Index) (gtid.Set, gtid.Set, error) {
	var archived, covered gtid.Set
	for _, s := range index.Segments {
		g, err := gtid.Parse(s.GTIDRange)
		if err != nil {
			return archived, covered, fmt.Errorf("segment %s: %w", s.Name, err)
		}
		p, err := gtid.Parse(s.PreviousGTIDs)
		if err != nil {
			return archived, covered, fmt.Errorf("segment %s: %w", s.Name, err)
		}
		archived, covered = gtid.Union(archived, g), gtid.Union(covered, p)
	}
	return archived, covered, nil
}

// observeBinlogs reads each binlog's Previous_gtids, derives its transactions, and reads the
// files of those not archived yet (their first commit time) and the closing time of the closed.
func (a *Archiver) observeBinlogs(ctx context.Context, listed []listedBinlog, executed, archived gtid.Set) ([]Binlog, error) {
	out := make([]Binlog, len(listed))
	for i, l := range listed {
		prev, err := a.Server.PreviousGTIDs(ctx, l.Name)
		if err != nil {
			return nil, stageError(stageMySQL, err)
		}
		out[i] = Binlog{Name: l.Name, Size: l.Size, Previous: prev, Open: i == len(listed)-1}
	}
	for i := range out {
		b := &out[i]
		next := executed
		if !b.Open {
			next = out[i+1].Previous
		}
		b.GTIDs = next.Subtract(b.Previous)
		path := filepath.Join(a.BinlogDir, b.Name)
		if !b.Open {
			st, err := os.Stat(path)
			if err != nil {
				return nil, stageError(stageBinlog, err)
			}
			b.ClosedAt = st.ModTime()
		}
		if b.GTIDs.IsEmpty() || archived.Contains(b.GTIDs) {
			continue
		}
		limit := int64(-1)
		if b.Open {
			limit = b.Size
		}
		sum, err := SummarizeFile(path, limit)
		if err != nil {
			return nil, stageError(stageBinlog, err)
		}
		b.FirstEvent = sum.FirstEvent
	}
	return out, nil
}

// act uploads, then rotates, then purges; a fork stops everything.
func (a *Archiver) act(ctx context.Context, o Observation, d Decision, uuid string) error {
	if !d.Fork.IsEmpty() {
		return fmt.Errorf("%w: %s", ErrFork, d.Fork)
	}
	for _, name := range d.Upload {
		if err := a.upload(ctx, uuid, find(o.Binlogs, name)); err != nil {
			return err
		}
	}
	if d.Rotate {
		if err := a.Server.Rotate(ctx); err != nil {
			return stageError(stageMySQL, err)
		}
	}
	if d.PurgeTo != "" {
		if err := a.Server.PurgeTo(ctx, d.PurgeTo); err != nil {
			return stageError(stageMySQL, err)
		}
		a.Log.V(1).Info("purged archived binary logs", "to", d.PurgeTo)
	}
	return nil
}

// upload sends a closed binlog's bytes, then lists it in the index.
func (a *Archiver) upload(ctx context.Context, uuid string, b Binlog) error {
	path := filepath.Join(a.BinlogDir, b.Name)
	sum, err := SummarizeFile(path, -1)
	if err != nil {
		return stageError(stageBinlog, err)
	}
	name := SegmentName(uuid, b.Name, b.Previous, b.GTIDs, sum.FirstEvent, sum.LastEvent)
	f, err := os.Open(path)
	if err != nil {
		return stageError(stageBinlog, err)
	}
	defer f.Close()
	verify := newHashingReader(io.LimitReader(f, sum.Size))
	if err := a.Store.PutSegment(ctx, a.Dir(), name, verify, sum.Size); err != nil {
		return stageError(stageUpload, err)
	}
	if got := verify.sum(); got != sum.SHA256 {
		return stageError(stageUpload, fmt.Errorf("%s changed while it was uploaded (sha256 %s, then %s)", b.Name, sum.SHA256, got))
	}
	seg := objectstore.Segment{Name: name, Size: sum.Size, FirstEventTime: sum.FirstEvent, LastEventTime: sum.LastEvent,
		GTIDRange: b.GTIDs.String(), PreviousGTIDs: b.Previous.String(), SHA256: sum.SHA256}
	if _, err := a.Store.UpdateIndex(ctx, a.Dir(), func(x *objectstore.Index) error { x.Upsert(seg); return nil }); err != nil {
		return stageError(stageIndex, err)
	}
	a.lastSegment = name
	if a.Metrics != nil {
		a.Metrics.Segments.Inc()
		a.Metrics.ArchivedBytes.Add(float64(sum.Size))
		a.Metrics.LastSegment.Set(float64(sum.LastEvent.UnixMicro()) / 1e6)
	}
	a.Log.V(1).Info("archived a binary log", "binlog", b.Name, "segment", name, "gtids", seg.GTIDRange)
	return nil
}

// record updates the metrics and reports the health when it changed.
func (a *Archiver) record(ctx context.Context, d Decision, err error) {
	h := Health{OK: true, Reason: HealthArchiving, Backlog: d.Backlog, LastSegment: a.lastSegment, StandDown: d.StandDown}
	oldest := d.OldestUnarchived
	if err == nil { // the uploads went through: what waits is the open binlog
		h.Backlog, oldest = d.Backlog-len(d.Upload), d.OpenUnarchived
	}
	if !oldest.IsZero() {
		h.Lag = max(a.Clock.Since(oldest), 0)
	}
	if err != nil && a.lastHealth != nil && d.Backlog == 0 {
		h.Backlog, h.Lag = a.lastHealth.Backlog, a.lastHealth.Lag // a failed gather: keep what was known
	}
	switch {
	case errors.Is(err, ErrFork):
		h.OK, h.Reason, h.Message = false, HealthFork, err.Error()
	case errors.Is(err, ErrNotHeld):
		h.OK, h.Reason, h.Message = false, HealthNotHeld, errors.Unwrap(err).Error()
	case err != nil:
		h.OK, h.Reason = false, HealthFailed
		h.Message = fmt.Sprintf("archiving failed (%v); %d local binary logs wait and are kept", err, d.Backlog)
	case d.StandDown != "":
		h.Reason, h.Message = HealthStandingBy, "not archiving: "+d.StandDown
	case !d.Gap.IsEmpty():
		h.OK, h.Reason = false, HealthGap
		h.Message = fmt.Sprintf("the archive lacks %s before this server's first binlog to archive: point-in-time recovery cannot cross it until a new base backup", d.Gap)
	default:
		h.Message = fmt.Sprintf("archiving; %d binary logs wait", d.Backlog)
	}
	if m := a.Metrics; m != nil {
		m.Lag.Set(h.Lag.Seconds())
		m.Backlog.Set(float64(h.Backlog))
		m.Fork.Set(boolGauge(h.Reason == HealthFork))
		m.StandingDown.Set(boolGauge(d.StandDown != ""))
		if err != nil {
			stage := stageFork
			var se *stagedError
			if errors.As(err, &se) {
				stage = se.stage
			}
			m.Failures.WithLabelValues(stage).Inc()
		}
	}
	if a.Report != nil && (a.lastHealth == nil || a.lastHealth.Reason != h.Reason || a.lastHealth.StandDown != h.StandDown) {
		a.Report(ctx, h)
	}
	a.lastHealth = &h
	a.reportStatus(ctx, h)
}

// reportStatus hands the primary's view of the archive to ReportStatus when it is due.
func (a *Archiver) reportStatus(ctx context.Context, h Health) {
	every := a.StatusEvery
	if every <= 0 {
		every = defaultStatusEvery
	}
	if a.ReportStatus == nil || h.StandDown != "" || a.index == nil || a.Clock.Since(a.lastStatus) < every {
		return
	}
	a.lastStatus = a.Clock.Now()
	a.ReportStatus(ctx, h, a.index)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
