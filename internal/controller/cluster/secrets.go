package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// writeSecrets performs w: it creates the missing password Secrets (one that appeared meanwhile
// is left alone), makes the new CA when w says so, then issues each certificate with the CA. The
// Events say what was written, up to a failure.
func (r *Reconciler) writeSecrets(ctx context.Context, c *v1.Cluster, w SecretWork, now time.Time) ([]kit.Event, error) {
	var events []kit.Event
	for _, user := range w.Users {
		created, err := r.createUserSecret(ctx, c, user)
		if err != nil {
			return events, err
		}
		if created {
			events = append(events, evSecretCreated.With(specs.UserSecretName(c.Name, user)))
		}
	}
	ca := w.CA
	name := specs.CASecretName(c.Name)
	switch {
	case w.RenewCA != "":
		var err error
		if ca, err = certs.NewCA(c.Name+"-ca", now); err != nil {
			return events, fmt.Errorf("creating the cluster CA: %w", err)
		}
		if err := r.writeSecret(ctx, specs.BuildRollingCASecret(c, ca.CertPEM, ca.KeyPEM, w.PreviousCA), w.CASecret); err != nil {
			return events, err
		}
		log.FromContext(ctx).Info("issued cluster CA", "secret", name, "reason", w.RenewCA, "previousTrusted", len(w.PreviousCA) > 0)
		events = append(events, evCertificateIssued.With(name, w.RenewCA))
	case w.EndRoll && ca != nil:
		if err := r.writeSecret(ctx, specs.BuildCASecret(c, ca.CertPEM, ca.KeyPEM), w.CASecret); err != nil {
			return events, err
		}
		log.FromContext(ctx).Info("CA roll ended: the previous CA is no longer trusted", "secret", name)
		events = append(events, evCARollEnded.With(name))
	}
	if ca == nil {
		return events, nil // the CA Secret is not the Cluster's: nothing is signed
	}
	bundle := certs.Bundle(ca.CertPEM, w.PreviousCA)
	for _, cw := range w.Certificates {
		data, err := certData(ca, cw, bundle, now)
		if err != nil {
			return events, err
		}
		if err := r.writeSecret(ctx, specs.BuildTLSSecret(c, cw.Secret, data), cw.Live); err != nil {
			return events, err
		}
		log.FromContext(ctx).Info("issued certificate", "secret", cw.Secret, "reason", cw.Reason, "trustOnly", cw.TrustOnly)
		events = append(events, evCertificateIssued.With(cw.Secret, cw.Reason))
	}
	if t := w.AppTrust; t != nil {
		next := t.Live.DeepCopy()
		next.Data = t.Data
		if err := kit.PatchSpec(ctx, r.Client, next, t.Live); err != nil {
			return events, fmt.Errorf("writing the CA certificate into Secret %s: %w", t.Live.Name, err)
		}
		log.FromContext(ctx).Info("wrote the CA certificate into the application Secret", "secret", t.Live.Name)
	}
	if mw := w.Metrics; mw != nil {
		created, err := r.writeMetricsSecret(ctx, c, mw, bundle)
		if err != nil {
			return events, err
		}
		if created {
			events = append(events, evSecretCreated.With(specs.MetricsSecretName(c.Name)))
		}
	}
	return events, nil
}

// certData is the Secret data cw asks for: the live certificate and key with the trust bundle
// when only the trust changes, else a new certificate issued by ca.
func certData(ca *certs.KeyPair, cw CertWork, bundle []byte, now time.Time) (map[string][]byte, error) {
	if cw.TrustOnly && cw.Live != nil {
		return map[string][]byte{certs.CertKey: cw.Live.Data[certs.CertKey], certs.KeyKey: cw.Live.Data[certs.KeyKey],
			certs.CAKey: bundle}, nil
	}
	kp, err := certs.Issue(ca, cw.Request, now)
	if err != nil {
		return nil, fmt.Errorf("issuing %s: %w", cw.Secret, err)
	}
	return map[string][]byte{certs.CertKey: kp.CertPEM, certs.KeyKey: kp.KeyPEM, certs.CAKey: bundle}, nil
}

// createUserSecret creates the password Secret of user with a new password; false when it
// already exists.
func (r *Reconciler) createUserSecret(ctx context.Context, c *v1.Cluster, user string) (bool, error) {
	password, err := specs.GeneratePassword(rand.Reader)
	if err != nil {
		return false, err
	}
	return r.createSecretOnce(ctx, specs.BuildUserSecret(c, user, password))
}

// createSecretOnce creates s; false when a Secret of its name already exists (left alone).
func (r *Reconciler) createSecretOnce(ctx context.Context, s *corev1.Secret) (bool, error) {
	if err := r.Client.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating Secret %s: %w", s.Name, err)
	}
	return true, nil
}

// writeSecret creates s when live is nil, or replaces the data of live with s's, guarded by
// live's resourceVersion.
func (r *Reconciler) writeSecret(ctx context.Context, s, live *corev1.Secret) error {
	if live == nil {
		if err := r.Client.Create(ctx, s); err != nil {
			return fmt.Errorf("creating Secret %s: %w", s.Name, err)
		}
		return nil
	}
	next := live.DeepCopy()
	next.Data = s.Data
	if err := kit.PatchSpec(ctx, r.Client, next, live); err != nil {
		return fmt.Errorf("updating Secret %s: %w", s.Name, err)
	}
	return nil
}
