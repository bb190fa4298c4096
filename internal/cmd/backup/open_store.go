package backup

import (
	"fmt"
	"os"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// OpenStore reads the secret files the flags name and returns a client of the object store;
// `manager restore` opens its store the same way.
func OpenStore(f backupjob.Store) (*objectstore.Client, error) {
	var values objectstore.SecretValues
	var err error
	if values.Credentials.AccessKeyID, err = ReadSecretFile(f.AccessKeyIDFile, "access key id"); err != nil {
		return nil, err
	}
	if values.Credentials.SecretAccessKey, err = ReadSecretFile(f.SecretAccessKeyFile, "secret access key"); err != nil {
		return nil, err
	}
	spec := &v1alpha1.ObjectStoreConfiguration{
		Bucket: f.Bucket, Path: f.Path, Endpoint: f.Endpoint, Region: f.Region, ForcePathStyle: f.ForcePathStyle,
	}
	if f.SessionTokenFile != "" {
		if values.Credentials.SessionToken, err = ReadSecretFile(f.SessionTokenFile, "session token"); err != nil {
			return nil, err
		}
	}
	if f.EndpointCAFile != "" {
		if values.EndpointCA, err = os.ReadFile(f.EndpointCAFile); err != nil {
			return nil, fmt.Errorf("reading the endpoint CA: %w", err)
		}
		spec.EndpointCA = &v1alpha1.SecretKeySelector{Name: "file", Key: f.EndpointCAFile}
	}
	cfg, err := objectstore.ResolveConfig(spec, values)
	if err != nil {
		return nil, err
	}
	return objectstore.New(cfg)
}

// ReadSecretFile reads a secret mounted as a file, without its trailing newline. Errors name the
// file, never its content.
func ReadSecretFile(path, what string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("no file given for the %s", what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the %s: %w", what, err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("the %s file %s is empty", what, path)
	}
	return v, nil
}
