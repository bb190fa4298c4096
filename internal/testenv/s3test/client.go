package s3test

import (
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Client returns a minio-go client for the root account, with path-style bucket addressing.
func (s *Server) Client() *minio.Client {
	c, err := s.NewClient(s.AccessKey, s.SecretKey)
	if err != nil {
		panic(fmt.Sprintf("s3test: %v", err)) // only a malformed endpoint fails, and ours is not
	}
	return c
}

// NewClient returns a minio-go client with the given credentials, for tests of what the server
// refuses.
func (s *Server) NewClient(accessKey, secretKey string) (*minio.Client, error) {
	c, err := minio.New(s.Addr, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKey, secretKey, ""),
		Secure:       false,
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", s.Endpoint, err)
	}
	return c, nil
}

func makeBucketOptions(region string) minio.MakeBucketOptions {
	return minio.MakeBucketOptions{Region: region}
}
