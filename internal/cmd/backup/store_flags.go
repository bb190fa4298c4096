package backup

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// StoreFlags locate the object store; `manager restore` shares them.
type StoreFlags struct {
	Bucket, Path, Endpoint, Region string
	ForcePathStyle                 bool
	AccessKeyIDFile                string
	SecretAccessKeyFile            string
	SessionTokenFile               string
	EndpointCAFile                 string
}

// Bind registers the flags on fs.
func (f *StoreFlags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.Bucket, "bucket", "", "object store bucket")
	fs.StringVar(&f.Path, "path", "", "key prefix inside the bucket")
	fs.StringVar(&f.Endpoint, "endpoint", "", "S3 endpoint URL (empty: AWS S3)")
	fs.StringVar(&f.Region, "region", "", "bucket region")
	fs.BoolVar(&f.ForcePathStyle, "force-path-style", false, "address the bucket in the URL path")
	fs.StringVar(&f.AccessKeyIDFile, "access-key-id-file", "", "file holding the access key id")
	fs.StringVar(&f.SecretAccessKeyFile, "secret-access-key-file", "", "file holding the secret access key")
	fs.StringVar(&f.SessionTokenFile, "session-token-file", "", "file holding a session token (optional)")
	fs.StringVar(&f.EndpointCAFile, "endpoint-ca-file", "", "PEM bundle signing the endpoint's certificate (optional)")
}

// Open reads the secret files and returns a client.
func (f *StoreFlags) Open() (*objectstore.Client, error) {
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
