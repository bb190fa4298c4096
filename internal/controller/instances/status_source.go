package instances

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// StatusSource asks a Cluster's running instances for their status. The production source
// calls each instance manager over mTLS; tests inject reports.
type StatusSource interface {
	// InstanceStatuses returns the answers by instance name, and the instances asked that did not
	// answer with their error.
	InstanceStatuses(ctx context.Context, c *v1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]error)
}

// MTLS asks instance managers with the operator's client certificate, trusting the cluster CA
// (both CAs during a CA roll), read from the Cluster's Secrets on each call so renewed
// certificates and CAs are picked up.
type MTLS struct {
	Reader client.Reader
	// Timeout bounds each call; 0 means instanceclient.DefaultTimeout.
	Timeout time.Duration
}

// InstanceStatuses implements StatusSource, asking every running Pod with an IP in parallel.
func (s MTLS) InstanceStatuses(ctx context.Context, c *v1.Cluster, pods []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	errs := map[string]error{}
	cl, err := s.client(ctx, c)
	if err != nil {
		for _, p := range askable(pods) {
			errs[p.Name] = err
		}
		return nil, errs
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	reports := map[string]*instanceclient.Status{}
	for _, p := range askable(pods) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := cl.Status(ctx, instanceTarget(p))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[p.Name] = err
			} else {
				reports[p.Name] = st
			}
		}()
	}
	wg.Wait()
	return reports, errs
}

func (s MTLS) client(ctx context.Context, c *v1.Cluster) (*instanceclient.Client, error) {
	cfg, err := s.tlsConfig(ctx, c)
	if err != nil {
		return nil, err
	}
	return instanceclient.New(cfg, s.Timeout), nil
}

// ErrNotControlled: a Secret the operator's mTLS client would trust is not controlled by the Cluster.
var ErrNotControlled = errors.New("not controlled by the Cluster, not trusted")

// tlsConfig is the operator's side of the mTLS with c's instances: its client certificate, the
// cluster CA (both during a CA roll) as the only trust.
func (s MTLS) tlsConfig(ctx context.Context, c *v1.Cluster) (*tls.Config, error) {
	var ca, cert corev1.Secret
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: specs.CASecretName(c.Name)}, &ca); err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w", err)
	}
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.OperatorClientSecretName(c.Name)}
	if err := s.Reader.Get(ctx, key, &cert); err != nil {
		return nil, fmt.Errorf("reading the operator client certificate: %w", err)
	}
	// A CA or certificate Secret made by someone else under these names is never trusted (the
	// Cluster reports it as an OwnershipConflict): its key could sign for an impostor instance.
	for _, s := range []*corev1.Secret{&ca, &cert} {
		if !metav1.IsControlledBy(s, c) {
			return nil, fmt.Errorf("%w: Secret %s", ErrNotControlled, s.Name)
		}
	}
	return instanceclient.TLSConfig(specs.CATrust(ca.Data), cert.Data[certs.CertKey], cert.Data[certs.KeyKey])
}

// askable are the Pods an instance manager could answer from: running, with an IP, not going away.
func askable(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			out = append(out, p)
		}
	}
	return out
}

// instanceTarget dials the Pod IP and verifies the certificate for the headless Service's name.
func instanceTarget(p corev1.Pod) instanceclient.Target {
	return instanceclient.Target{
		Instance:   p.Name,
		Address:    net.JoinHostPort(p.Status.PodIP, strconv.Itoa(specs.ManagerPort)),
		ServerName: p.Name + "." + p.Namespace + ".svc",
	}
}

// SemiSyncSetter applies runtime semi-sync settings through the instances' control API: the
// primary's acknowledgement count, and whether a replica acknowledges. MTLS implements it; a
// status source that does not leaves semi-sync to the instances' own defaults (every replica
// acknowledges).
type SemiSyncSetter interface {
	SetSemiSync(ctx context.Context, c *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncRequest) error
	SetSemiSyncReplica(ctx context.Context, c *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncReplicaRequest) error
}

// MTLS sets semi-sync: a method missing here would silently leave semi-sync to the instances.
var _ SemiSyncSetter = MTLS{}

// SetSemiSync implements SemiSyncSetter over mTLS with the operator's client certificate.
func (s MTLS) SetSemiSync(ctx context.Context, c *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncRequest) error {
	cl, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	return cl.SetSemiSync(ctx, instanceTarget(pod), req)
}

// SetSemiSyncReplica implements SemiSyncSetter over mTLS with the operator's client certificate.
func (s MTLS) SetSemiSyncReplica(ctx context.Context, c *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncReplicaRequest) error {
	cl, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	return cl.SetSemiSyncReplica(ctx, instanceTarget(pod), req)
}
