package objectstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const (
	secretAccessKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	accessKeyID     = "AKIAIOSFODNN7EXAMPLE"
)

func storeSpec() *v1alpha1.ObjectStoreConfiguration {
	return &v1alpha1.ObjectStoreConfiguration{
		Bucket: "backups",
		Credentials: v1alpha1.S3Credentials{
			AccessKeyID:     v1alpha1.SecretKeySelector{Name: "s3", Key: "id"},
			SecretAccessKey: v1alpha1.SecretKeySelector{Name: "s3", Key: "secret"},
		},
	}
}

func creds() objectstore.SecretValues {
	return objectstore.SecretValues{Credentials: objectstore.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey}}
}

func TestResolveConfig(t *testing.T) {
	for _, tc := range []struct {
		rule   string
		change func(*v1alpha1.ObjectStoreConfiguration, *objectstore.SecretValues)
		check  func(objectstore.Config) bool
	}{
		{"no endpoint means AWS S3 over TLS in us-east-1", nil, func(c objectstore.Config) bool {
			return c.Endpoint == "s3.amazonaws.com" && c.Secure && c.Region == "us-east-1" && c.Path == ""
		}},
		{"an http endpoint with a port", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) {
			s.Endpoint, s.Region, s.ForcePathStyle = "http://minio.storage:9000/", "eu-west-1", true
		}, func(c objectstore.Config) bool {
			return c.Endpoint == "minio.storage:9000" && !c.Secure && c.Region == "eu-west-1" && c.ForcePathStyle &&
				c.EndpointURL() == "http://minio.storage:9000"
		}},
		{"the path loses its slashes", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) {
			s.Path = "/team-a/mysql/"
		}, func(c objectstore.Config) bool { return c.Path == "team-a/mysql" }},
		{"the credentials and CA are carried", func(s *v1alpha1.ObjectStoreConfiguration, v *objectstore.SecretValues) {
			s.Endpoint = "https://s3.internal"
			s.EndpointCA = &v1alpha1.SecretKeySelector{Name: "ca", Key: "ca.crt"}
			v.EndpointCA = testCA(t)
			v.Credentials.SessionToken = "token"
		}, func(c objectstore.Config) bool {
			return c.Credentials.SecretAccessKey == secretAccessKey && c.Credentials.SessionToken == "token" && len(c.CABundle) > 0
		}},
	} {
		spec, values := storeSpec(), creds()
		if tc.change != nil {
			tc.change(spec, &values)
		}
		cfg, err := objectstore.ResolveConfig(spec, values)
		if err != nil || !tc.check(cfg) {
			t.Errorf("%s: got %+v, %v", tc.rule, cfg, err)
		}
		if _, err := objectstore.New(cfg); err != nil {
			t.Errorf("%s: New: %v", tc.rule, err)
		}
	}
}

func TestResolveConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		rule   string
		change func(*v1alpha1.ObjectStoreConfiguration, *objectstore.SecretValues)
	}{
		{"no bucket", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) { s.Bucket = "" }},
		{"an endpoint without a scheme", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) { s.Endpoint = "minio:9000" }},
		{"an endpoint with a path", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) {
			s.Endpoint = "https://h/bucket"
		}},
		{"an endpoint with a user", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) {
			s.Endpoint = "https://" + accessKeyID + ":" + secretAccessKey + "@h"
		}},
		{"a path with an empty segment", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) { s.Path = "a//b" }},
		{"a path with ..", func(s *v1alpha1.ObjectStoreConfiguration, _ *objectstore.SecretValues) { s.Path = "a/../b" }},
		{"no secret access key", func(_ *v1alpha1.ObjectStoreConfiguration, v *objectstore.SecretValues) {
			v.Credentials.SecretAccessKey = ""
		}},
		{"a CA for an http endpoint", func(s *v1alpha1.ObjectStoreConfiguration, v *objectstore.SecretValues) {
			s.Endpoint, s.EndpointCA, v.EndpointCA = "http://h", &v1alpha1.SecretKeySelector{Name: "ca", Key: "ca"}, testCA(t)
		}},
		{"a CA that is not PEM", func(s *v1alpha1.ObjectStoreConfiguration, v *objectstore.SecretValues) {
			s.Endpoint, s.EndpointCA, v.EndpointCA = "https://h", &v1alpha1.SecretKeySelector{Name: "ca", Key: "ca"}, []byte("nope")
		}},
	} {
		spec, values := storeSpec(), creds()
		tc.change(spec, &values)
		_, err := objectstore.ResolveConfig(spec, values)
		if !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.rule, err)
			continue
		}
		if strings.Contains(err.Error(), secretAccessKey) {
			t.Errorf("%s: the error shows the secret: %v", tc.rule, err)
		}
	}
	if _, err := objectstore.ResolveConfig(nil, creds()); !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("nil configuration: %v", err)
	}
}

func TestCredentialsNeverPrinted(t *testing.T) {
	cfg, err := objectstore.ResolveConfig(storeSpec(), creds())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Credentials.SessionToken = "session-token-value"
	js, _ := json.Marshal(cfg)
	for _, out := range []string{
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg.Credentials),
		fmt.Sprintf("%d", cfg.Credentials), fmt.Sprintf("%x", cfg.Credentials), fmt.Sprintf("%q", cfg.Credentials), fmt.Sprintf("%v", &cfg), string(js),
	} {
		for _, secret := range []string{secretAccessKey, accessKeyID, "session-token-value"} {
			if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
				t.Errorf("printed configuration shows a credential: %s", out)
			}
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("printed configuration does not say the credentials are redacted: %s", out)
		}
	}
}

// secretReader serves Secrets from a map and counts reads.
type secretReader struct {
	secrets map[string]map[string]string
	gets    int
}

func (r *secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets++
	data, ok := r.secrets[key.Namespace+"/"+key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	secret := obj.(*corev1.Secret)
	secret.Data = map[string][]byte{}
	for k, v := range data {
		secret.Data[k] = []byte(v)
	}
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not implemented")
}

func TestReadSecrets(t *testing.T) {
	ca := string(testCA(t))
	reader := &secretReader{secrets: map[string]map[string]string{
		"db/s3": {"id": accessKeyID + "\n", "secret": secretAccessKey + "\r\n", "token": "tok"},
		"db/ca": {"ca.crt": ca},
	}}
	spec := storeSpec()
	spec.Credentials.SessionToken = &v1alpha1.SecretKeySelector{Name: "s3", Key: "token"}
	spec.EndpointCA = &v1alpha1.SecretKeySelector{Name: "ca", Key: "ca.crt"}
	values, err := objectstore.ReadSecrets(t.Context(), reader, "db", spec)
	if err != nil {
		t.Fatal(err)
	}
	if values.Credentials != (objectstore.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey, SessionToken: "tok"}) ||
		string(values.EndpointCA) != ca {
		t.Errorf("read %+v (CA %d bytes)", values.Credentials, len(values.EndpointCA))
	}
	if reader.gets != 2 {
		t.Errorf("%d Secret reads, want 2 (one per Secret)", reader.gets)
	}

	spec.Credentials.SecretAccessKey.Key = "missing-key"
	_, err = objectstore.ReadSecrets(t.Context(), reader, "db", spec)
	if !errors.Is(err, objectstore.ErrInvalid) || !strings.Contains(err.Error(), "missing-key") || strings.Contains(err.Error(), accessKeyID) {
		t.Errorf("missing key: got %v", err)
	}
	spec.EndpointCA.Name = "absent"
	spec.Credentials.SecretAccessKey.Key = "secret"
	_, err = objectstore.ReadSecrets(t.Context(), reader, "db", spec)
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "db/absent") {
		t.Errorf("missing Secret: got %v, want NotFound naming db/absent", err)
	}
}

// testCA returns the certificate of a throwaway TLS proxy, as a PEM bundle.
func testCA(t *testing.T) []byte {
	t.Helper()
	p, err := s3proxy.NewTLS("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.CACertPEM()
}

// TestEndpointCA reaches the real server through TLS: with the endpoint CA the backup goes
// through, with the system roots it is refused.
func TestEndpointCA(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.StartTLS(t, s.Endpoint)
	spec := &v1alpha1.ObjectStoreConfiguration{
		Bucket: s.Bucket, Endpoint: proxy.URL, Region: s.Region, ForcePathStyle: true,
		EndpointCA: &v1alpha1.SecretKeySelector{Name: "ca", Key: "ca.crt"},
	}
	values := objectstore.SecretValues{
		Credentials: objectstore.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey},
		EndpointCA:  proxy.CACertPEM(),
	}
	cfg, err := objectstore.ResolveConfig(spec, values)
	if err != nil {
		t.Fatal(err)
	}
	client := newClient(t, cfg, false)
	r := ref("tls", "id1")
	if _, err := client.UploadBackup(t.Context(), request(r, newProducer(20, 3000))); err != nil {
		t.Fatalf("upload over TLS with the endpoint CA: %v", err)
	}
	if _, err := client.DownloadBackup(t.Context(), r, &strings.Builder{}); err != nil {
		t.Errorf("download over TLS: %v", err)
	}
	cfg.CABundle = nil
	untrusting := newClient(t, cfg, false)
	if _, err := untrusting.ReadMetadata(t.Context(), r); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: got %v, want a certificate error", err)
	}
}
