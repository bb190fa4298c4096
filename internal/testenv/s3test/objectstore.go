package s3test

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// StoreConfig resolves the object store configuration a Cluster would carry for this server,
// reached at endpoint (the server, or a proxy in front of it), under path.
func (s *Server) StoreConfig(t testing.TB, endpoint, path string) objectstore.Config {
	t.Helper()
	spec := &v1alpha1.ObjectStoreConfiguration{
		Bucket: s.Bucket, Path: path, Endpoint: endpoint, Region: s.Region, ForcePathStyle: true,
		Credentials: v1alpha1.S3Credentials{
			AccessKeyID:     v1alpha1.SecretKeySelector{Name: "s3", Key: "id"},
			SecretAccessKey: v1alpha1.SecretKeySelector{Name: "s3", Key: "secret"},
		},
	}
	cfg, err := objectstore.ResolveConfig(spec, objectstore.SecretValues{
		Credentials: objectstore.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey},
	})
	if err != nil {
		t.Fatalf("resolving the configuration: %v", err)
	}
	return cfg
}

// StoreClient returns an object store client for cfg. Without retries each request is tried
// once, so a fault injected in front of the server surfaces instead of being absorbed.
func StoreClient(t testing.TB, cfg objectstore.Config, retries bool) *objectstore.Client {
	t.Helper()
	if !retries {
		cfg.MaxRetries = 1
	}
	c, err := objectstore.New(cfg)
	if err != nil {
		t.Fatalf("creating the client: %v", err)
	}
	return c
}
