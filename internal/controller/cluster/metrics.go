package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// The operator's view of each Cluster, as metrics on the operator's endpoint: the gauges say
// what the last reconcile saw, the counters the primary changes it recorded.
var (
	metricLabels = []string{"namespace", "cluster"}
	instancesMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_instances",
		Help: "Instances the Cluster wants (spec.instances)."}, metricLabels)
	readyMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_ready_instances",
		Help: "Instances whose Pod the operator last saw Ready."}, metricLabels)
	primaryKnownMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_primary_known",
		Help: "1 when the operator last saw a current primary recorded (status.currentPrimary), else 0; absent before the Cluster's first primary."}, metricLabels)
	writableMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_writable_instances_seen",
		Help: "Instances whose last report to the operator said read_only=0 and super_read_only=0; an instance that did not answer is not counted."}, metricLabels)
	fencedMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_fenced_instances",
		Help: "Instances fenced by the operator (status.fencedInstances, from the fencing annotation)."}, metricLabels)
	divergedMet = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_cluster_diverged_instances",
		Help: "Instances recorded diverged (status.divergedInstances)."}, metricLabels)
	failoversMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_failovers_total",
		Help: "Failovers completed: the failure record cleared after another instance was promoted."}, metricLabels)
	switchoversMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_switchovers_total",
		Help: "Switchovers completed: the primary label moved to the promoted target."}, metricLabels)
	durationMet = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cnm_failover_duration_seconds",
		Help:    "From the failure recorded (failover) or targetPrimary set (switchover) to the new primary's promotion recorded.",
		Buckets: []float64{1, 2, 5, 10, 15, 20, 30, 45, 60, 120, 300, 600, 1800}}, append(metricLabels, "kind"))
	blockedMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_failovers_blocked_total",
		Help: "Episodes of a failover or switchover blocked, by the reason the Degraded condition records; counted when the condition takes that reason."},
		append(metricLabels, "reason"))
)

// Kinds of cnm_failover_duration_seconds.
const (
	kindFailover   = "failover"
	kindSwitchover = "switchover"
)

// blockedReasons are the Degraded reasons of a Blocked decision of the failover engine
// (failover.Conditions); each series exists from the Cluster's first reconcile, at 0.
var blockedReasons = []string{failover.ReasonFailoverBlocked, failover.ReasonAcknowledgedWritesOnPrimaryOnly,
	failover.ReasonSplitBrain, failover.ReasonSwitchoverBlocked}

var gauges = []*prometheus.GaugeVec{instancesMet, readyMet, primaryKnownMet, writableMet, fencedMet, divergedMet}

func init() {
	for _, g := range gauges {
		metrics.Registry.MustRegister(g)
	}
	metrics.Registry.MustRegister(failoversMet, switchoversMet, durationMet, blockedMet)
}

// exportView sets the gauges of o's Cluster from what this reconcile saw and decided, and makes
// its counters exist (at 0 until the first transition), so that rates and alerts see them.
func exportView(o *Observation, d Decision) {
	c := o.Cluster
	l := prometheus.Labels{"namespace": c.Namespace, "cluster": c.Name}
	instancesMet.With(l).Set(float64(c.Spec.Instances))
	readyMet.With(l).Set(float64(d.Status.ReadyInstances))
	if d.Status.CurrentPrimary == "" && d.Status.CurrentPrimaryTimestamp == nil {
		// Before its first primary (a bootstrap, a recovery that takes long) a Cluster has no
		// primary to miss: the series is absent, not 0, so CNMPrimaryMissing does not fire.
		primaryKnownMet.Delete(l)
	} else {
		primaryKnownMet.With(l).Set(boolValue(d.Status.CurrentPrimary != ""))
	}
	writable := 0
	for _, in := range d.failoverObservation.Instances {
		if in.SeenWritable() {
			writable++
		}
	}
	writableMet.With(l).Set(float64(writable))
	fencedMet.With(l).Set(float64(len(d.Status.FencedInstances)))
	divergedMet.With(l).Set(float64(len(d.Status.DivergedInstances)))
	failoversMet.With(l)
	switchoversMet.With(l)
	for _, kind := range []string{kindFailover, kindSwitchover} {
		durationMet.WithLabelValues(c.Namespace, c.Name, kind)
	}
	for _, reason := range blockedReasons {
		blockedMet.WithLabelValues(c.Namespace, c.Name, reason)
	}
}

// forgetCluster removes every series of a Cluster that is gone or being deleted.
func forgetCluster(key types.NamespacedName) {
	l := prometheus.Labels{"namespace": key.Namespace, "cluster": key.Name}
	for _, g := range gauges {
		g.Delete(l)
	}
	failoversMet.Delete(l)
	switchoversMet.Delete(l)
	durationMet.DeletePartialMatch(l)
	blockedMet.DeletePartialMatch(l)
}

// transition is a primary change or a blocking episode a reconcile records, counted once the act
// step that writes it succeeded: the failover's end and a blocking episode are written with the
// status (stepStatus), a switchover's end with the move of the primary label (stepRelabel). What
// is written is read back by the next reconcile, the next process included, and is no
// transition then: each is counted once, and a write that fails counts nothing.
type transition struct {
	step actStep
	// kind is kindFailover or kindSwitchover for a completion, "" for a blocking episode.
	kind     string
	duration time.Duration
	// reason is the Degraded reason of a blocking episode.
	reason string
}

// planTransitions returns what d records of o's Cluster, from the status as read (o) and as d
// writes it. A failover completes when the record of its failure (primaryFailingSince) is
// cleared after another instance was promoted; it lasted from that record to the promotion's
// timestamp. A switchover completes when the operator first sees its target recorded as the
// primary and moves the label; it lasted from targetPrimaryTimestamp to the promotion's. A
// blocking episode starts when the Degraded condition takes one of blockedReasons (or another of
// them); it lasts as long as the condition keeps that reason, however many reconciles decide it.
func planTransitions(o Observation, d Decision) []transition {
	old, next := o.Cluster.Status, d.Status
	var out []transition
	if old.PrimaryFailingSince != nil && next.PrimaryFailingSince == nil && failover.ClusterPromotedSinceFailing(&old) {
		out = append(out, transition{step: stepStatus, kind: kindFailover,
			duration: since(old.PrimaryFailingSince, next.CurrentPrimaryTimestamp, o.Now)})
	}
	if d.switchedOver {
		out = append(out, transition{step: stepDemotion, kind: kindSwitchover,
			duration: since(next.TargetPrimaryTimestamp, next.CurrentPrimaryTimestamp, o.Now)})
	}
	if reason := blockedReason(next.Conditions); reason != "" && blockedReason(old.Conditions) != reason {
		out = append(out, transition{step: stepStatus, reason: reason})
	}
	return out
}

// blockedReason is the Degraded condition's reason when it is True for one of blockedReasons.
func blockedReason(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, v1.ConditionDegraded)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	for _, r := range blockedReasons {
		if c.Reason == r {
			return r
		}
	}
	return ""
}

// since is the time from start to the promotion recorded at end (now when end is not recorded),
// never negative: the promotion is stamped by the new primary's clock and to the second.
func since(start, end *metav1.Time, now time.Time) time.Duration {
	if start == nil {
		return 0
	}
	t := now
	if end != nil {
		t = end.Time
	}
	return max(t.Sub(start.Time), 0)
}

// countTransitions counts the transitions d records at step, which has just succeeded.
func (d Decision) countTransitions(namespace, cluster string, step actStep) {
	for _, t := range d.transitions {
		if t.step != step {
			continue
		}
		switch t.kind {
		case kindFailover:
			failoversMet.WithLabelValues(namespace, cluster).Inc()
			durationMet.WithLabelValues(namespace, cluster, kindFailover).Observe(t.duration.Seconds())
		case kindSwitchover:
			switchoversMet.WithLabelValues(namespace, cluster).Inc()
			durationMet.WithLabelValues(namespace, cluster, kindSwitchover).Observe(t.duration.Seconds())
		default:
			blockedMet.WithLabelValues(namespace, cluster, t.reason).Inc()
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
