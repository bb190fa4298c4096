package objectstore

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// ReadSecrets reads the Secret values an object store configuration references, from namespace.
// A trailing newline (as `kubectl create secret --from-file` keeps) is removed from the access
// key id, the secret access key and the session token. Errors name the Secret and key, never a
// value.
func ReadSecrets(ctx context.Context, reader client.Reader, namespace string,
	store *v1alpha1.ObjectStoreConfiguration,
) (SecretValues, error) {
	if store == nil {
		return SecretValues{}, fmt.Errorf("%w: no object store configuration", ErrInvalid)
	}
	secrets := map[string]*corev1.Secret{}
	get := func(sel v1alpha1.SecretKeySelector) ([]byte, error) {
		secret, ok := secrets[sel.Name]
		if !ok {
			secret = &corev1.Secret{}
			key := client.ObjectKey{Namespace: namespace, Name: sel.Name}
			if err := reader.Get(ctx, key, secret); err != nil {
				return nil, fmt.Errorf("reading Secret %s: %w", key, err)
			}
			secrets[sel.Name] = secret
		}
		value, ok := secret.Data[sel.Key]
		if !ok {
			return nil, fmt.Errorf("%w: Secret %s/%s has no key %q", ErrInvalid, namespace, sel.Name, sel.Key)
		}
		return value, nil
	}
	var values SecretValues
	creds := store.Credentials
	for _, field := range []struct {
		sel *v1alpha1.SecretKeySelector
		dst *string
	}{
		{&creds.AccessKeyID, &values.Credentials.AccessKeyID},
		{&creds.SecretAccessKey, &values.Credentials.SecretAccessKey},
		{creds.SessionToken, &values.Credentials.SessionToken},
	} {
		if field.sel == nil {
			continue
		}
		value, err := get(*field.sel)
		if err != nil {
			return SecretValues{}, err
		}
		*field.dst = strings.TrimRight(string(value), "\r\n")
	}
	if store.EndpointCA != nil {
		ca, err := get(*store.EndpointCA)
		if err != nil {
			return SecretValues{}, err
		}
		values.EndpointCA = ca
	}
	return values, nil
}

// OpenSpec reads the Secrets spec references in namespace, resolves the configuration and opens
// it with open (New when nil).
func OpenSpec(ctx context.Context, reader client.Reader, namespace string, spec *v1alpha1.ObjectStoreConfiguration,
	open func(Config) (*Client, error),
) (*Client, error) {
	secrets, err := ReadSecrets(ctx, reader, namespace, spec)
	if err != nil {
		return nil, fmt.Errorf("object store credentials: %w", err)
	}
	cfg, err := ResolveConfig(spec, secrets)
	if err != nil {
		return nil, fmt.Errorf("object store configuration: %w", err)
	}
	if open == nil {
		open = New
	}
	return open(cfg)
}
