package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/operatorauth"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// The files of config/rbac the operator and a scraper of its metrics need.
var rbacFiles = []string{"role.yaml", "role_binding.yaml", "metrics_auth_role.yaml", "metrics_reader_role.yaml"}

// operatorResult is what the operator part measured.
type operatorResult struct {
	clusters, schedules int
	emptySeries         int // before any Cluster or ScheduledBackup existed
	reconciled          time.Duration
	stats               scrapeStats
	scheduleSeries      int // series with a scheduledbackup label
	clusterSeries       int // series with a cluster label
	notes               []string
}

// runOperator runs the operator's manager in this process against a real API server, as its
// ServiceAccount, with its metrics server (HTTPS, token reviewed by the API server); creates
// o.clusters Clusters with o.schedules ScheduledBackups spread over them; waits until every
// schedule created its Backup and the series stop changing; then scrapes o.scrapes times in a
// row with the token of a ServiceAccount bound to cloudnative-mysql-metrics-reader.
func runOperator(ctx context.Context, o options, q quiet) (_ *operatorResult, err error) {
	if os.Getenv(specs.OperatorImageEnv) == "" {
		_ = os.Setenv(specs.OperatorImageEnv, "operator:bench")
	}
	logFile, err := os.CreateTemp("", "bench-metrics-operator-*.log")
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = logFile.Close()
		if err == nil {
			_ = os.Remove(logFile.Name())
		} else {
			err = fmt.Errorf("%w (the operator's log: %s)", err, logFile.Name())
		}
	}()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))

	env, err := kubetest.Start(kubetest.Options{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.Stop() }()
	cfg, err := operatorauth.OperatorConfig(ctx, env, rbacFiles...)
	if err != nil {
		return nil, err
	}
	reader, err := operatorauth.BoundToken(ctx, env, "default", "prometheus", "cloudnative-mysql-metrics-reader")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	mgr, err := operator.NewManager(cfg, operator.Options{MetricsBindAddress: addr, HealthProbeBindAddress: "0"})
	if err != nil {
		return nil, err
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		stop()
		<-done
	}()

	// The serving certificate is self-signed (no --metrics-cert-dir), so it is not verified, as
	// the shipped scrape configuration does; the token is.
	s := newScraper("https://"+addr+"/metrics", reader, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
	res := &operatorResult{clusters: o.clusters, schedules: o.schedules}
	empty, err := scrapeWhenServed(ctx, s, done)
	if err != nil {
		return nil, err
	}
	res.emptySeries = countSeries(empty.body, "")

	begin := time.Now()
	if err := createSchedules(ctx, env.Client, o.clusters, o.schedules); err != nil {
		return nil, err
	}
	if err := waitReconciled(ctx, s, o.schedules, o.settleLimit); err != nil {
		return nil, err
	}
	res.reconciled = time.Since(begin)
	if note := q.wait("the operator's scrapes"); note != "" {
		res.notes = append(res.notes, note)
	}
	if res.stats, err = s.repeat(ctx, o.scrapes); err != nil {
		return nil, err
	}
	if note := q.during("the operator's scrapes"); note != "" {
		res.notes = append(res.notes, note)
	}
	res.scheduleSeries = countSeries(res.stats.last, "scheduledbackup")
	res.clusterSeries = countSeries(res.stats.last, "cluster")
	return res, nil
}

// scrapeWhenServed scrapes until the metrics server answers (a minute at most).
func scrapeWhenServed(ctx context.Context, s *scraper, stopped <-chan error) (scrape, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		sc, err := s.once(ctx)
		if err == nil {
			return sc, nil
		}
		select {
		case err := <-stopped:
			return scrape{}, fmt.Errorf("the operator stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return scrape{}, fmt.Errorf("the operator's metrics not served within a minute: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// createSchedules creates clusters namespaces, each with the Cluster "db", and schedules
// ScheduledBackups spread over them: daily, each with an immediate Backup. The Clusters have no
// spec.backup, so the Backup controller fails those Backups at once (no object store): every
// schedule, Cluster and Backup series the operator keeps is there without instances.
func createSchedules(ctx context.Context, c client.Client, clusters, schedules int) error {
	var objs []client.Object
	for i := range clusters {
		ns := fmt.Sprintf("bench-%03d", i)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		objs = append(objs, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:bench", MaxSwitchoverDelay: 3600,
				Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}})
	}
	for i := range schedules {
		ns := fmt.Sprintf("bench-%03d", i%clusters)
		objs = append(objs, &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("sb-%04d", i)},
			Spec: v1.ScheduledBackupSpec{Schedule: "0 0 0 * * *", Immediate: ptr.To(true),
				Cluster: v1.LocalObjectReference{Name: "db"}}})
	}
	return createAll(ctx, c, objs, 16)
}

// createAll creates objs with workers creations at a time; the first error is returned.
func createAll(ctx context.Context, c client.Client, objs []client.Object, workers int) error {
	work := make(chan client.Object)
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for obj := range work {
				if err := c.Create(ctx, obj); err != nil {
					once.Do(func() { first = fmt.Errorf("creating %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err) })
				}
			}
		})
	}
	for _, obj := range objs {
		work <- obj
	}
	close(work)
	wg.Wait()
	return first
}

// waitReconciled scrapes until every schedule has its lateness series (it created its
// immediate Backup), then until the number of series is the same in two scrapes 15 s apart.
func waitReconciled(ctx context.Context, s *scraper, schedules int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last := -1
	for {
		sc, err := s.once(ctx)
		if err != nil {
			return err
		}
		lateness, series := countMetric(sc.body, "cnm_schedule_lateness_seconds"), countSeries(sc.body, "")
		if lateness >= schedules && series == last {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not settled after %s: %d of %d schedules with a lateness series, %d series", limit, lateness, schedules, series)
		}
		fmt.Fprintf(os.Stderr, "# operator: %d of %d schedules ran, %d series\n", lateness, schedules, series)
		if lateness >= schedules {
			last = series
		}
		time.Sleep(15 * time.Second)
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
