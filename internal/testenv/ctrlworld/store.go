package ctrlworld

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// Store is a real versitygw bucket with a fault-injecting proxy in front of it.
type Store struct {
	S3    *s3test.Server
	Proxy *s3proxy.Proxy
}

// StartStore starts a versitygw and a proxy for the World's test, and creates the Secret named
// secret holding its credentials under the keys "id" and "secret" (the secret followed by
// secretSuffix, to test how the operator trims what users paste).
func (w *World) StartStore(secret, secretSuffix string) *Store {
	w.T.Helper()
	s3 := s3test.Start(w.T)
	st := &Store{S3: s3, Proxy: s3proxy.Start(w.T, s3.Endpoint)}
	w.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: w.NS},
		Data: map[string][]byte{"id": []byte(s3.AccessKey), "secret": []byte(s3.SecretKey + secretSuffix)}})
	return st
}

// Config is a Cluster's object store on the bucket under path, with credentials from the Secret
// named secret; through the proxy when viaProxy.
func (s *Store) Config(secret, path string, viaProxy bool) *v1.ObjectStoreConfiguration {
	endpoint := s.S3.Endpoint
	if viaProxy {
		endpoint = s.Proxy.URL
	}
	return &v1.ObjectStoreConfiguration{Bucket: s.S3.Bucket, Path: path, Endpoint: endpoint, Region: s.S3.Region,
		ForcePathStyle: true, Credentials: v1.S3Credentials{AccessKeyID: v1.SecretKeySelector{Name: secret, Key: "id"},
			SecretAccessKey: v1.SecretKeySelector{Name: secret, Key: "secret"}}}
}

// Direct is a client of the bucket under path, not through the proxy: what the test reads to
// see what the store really holds.
func (s *Store) Direct(path string) (*objectstore.Client, error) {
	return objectstore.New(objectstore.Config{Endpoint: strings.TrimPrefix(s.S3.Endpoint, "http://"),
		Region: s.S3.Region, Bucket: s.S3.Bucket, Path: path, ForcePathStyle: true,
		Credentials: objectstore.Credentials{AccessKeyID: s.S3.AccessKey, SecretAccessKey: s.S3.SecretKey}})
}
