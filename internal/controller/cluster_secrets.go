package controller

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// ensureSecrets creates the user password Secrets that are missing (never touching existing
// ones), the cluster CA when missing or expiring, and every certificate planCertificates asks for.
func (r *ClusterReconciler) ensureSecrets(ctx context.Context, c *v1.Cluster, instances []string, now time.Time) ([]eventRecord, error) {
	var events []eventRecord
	for _, user := range specs.Users {
		created, err := r.ensureUserSecret(ctx, c, user)
		if err != nil {
			return events, err
		}
		if created {
			events = append(events, evClusterSecretCreated.with(specs.UserSecretName(c.Name, user)))
		}
	}
	ca, ev, err := r.ensureCA(ctx, c, now)
	events = append(events, ev...)
	if err != nil {
		return events, err
	}
	existing := map[string][]byte{}
	for name := range certRequests(c, instances) {
		var s corev1.Secret
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s); client.IgnoreNotFound(err) != nil {
			return events, fmt.Errorf("reading Secret %s: %w", name, err)
		}
		existing[name] = s.Data[certs.CertKey]
	}
	for _, w := range planCertificates(c, instances, ca, existing, now) {
		kp, err := certs.Issue(ca, w.Request, now)
		if err != nil {
			return events, fmt.Errorf("issuing %s: %w", w.Secret, err)
		}
		if err := r.writeSecret(ctx, specs.BuildTLSSecret(c, w.Secret, kp.SecretData(ca)), existing[w.Secret] != nil); err != nil {
			return events, err
		}
		log.FromContext(ctx).Info("issued certificate", "secret", w.Secret, "reason", w.Reason)
		events = append(events, evClusterCertificateIssued.with(w.Secret, w.Reason))
	}
	return events, nil
}

// ensureUserSecret creates the password Secret of user when it does not exist.
func (r *ClusterReconciler) ensureUserSecret(ctx context.Context, c *v1.Cluster, user string) (bool, error) {
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.UserSecretName(c.Name, user)}
	err := r.APIReader.Get(ctx, key, &corev1.Secret{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	password, err := specs.GeneratePassword(rand.Reader)
	if err != nil {
		return false, err
	}
	if err := r.Client.Create(ctx, specs.BuildUserSecret(c, user, password)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating Secret %s: %w", key.Name, err)
	}
	return true, nil
}

// ensureCA returns the cluster CA, creating or renewing it when needed.
func (r *ClusterReconciler) ensureCA(ctx context.Context, c *v1.Cluster, now time.Time) (*certs.KeyPair, []eventRecord, error) {
	name := specs.CASecretName(c.Name)
	var s corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s)
	if client.IgnoreNotFound(err) != nil {
		return nil, nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	reason := certs.CANeedsRenewal(s.Data[specs.CACertKey], now)
	if reason == "" {
		ca, err := certs.ParseKeyPair(s.Data[specs.CACertKey], s.Data[specs.CAKeyKey])
		if err == nil {
			return ca, nil, nil
		}
		reason = certs.ReasonUnparsable
	}
	ca, err := certs.NewCA(c.Name+"-ca", now)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the cluster CA: %w", err)
	}
	if err := r.writeSecret(ctx, specs.BuildCASecret(c, ca.CertPEM, ca.KeyPEM), s.ResourceVersion != ""); err != nil {
		return nil, nil, err
	}
	log.FromContext(ctx).Info("issued cluster CA", "secret", name, "reason", reason)
	return ca, []eventRecord{evClusterCertificateIssued.with(name, reason)}, nil
}

// writeSecret creates s, or replaces the data of the existing Secret of that name.
func (r *ClusterReconciler) writeSecret(ctx context.Context, s *corev1.Secret, exists bool) error {
	if !exists {
		if err := r.Client.Create(ctx, s); err != nil {
			return fmt.Errorf("creating Secret %s: %w", s.Name, err)
		}
		return nil
	}
	var cur corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s), &cur); err != nil {
		return fmt.Errorf("reading Secret %s: %w", s.Name, err)
	}
	old := cur.DeepCopy()
	cur.Data = s.Data
	if err := r.Client.Patch(ctx, &cur, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("updating Secret %s: %w", s.Name, err)
	}
	return nil
}
