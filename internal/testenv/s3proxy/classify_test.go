package s3proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		copySource     bool
		want           s3proxy.Kind
	}{
		{"POST", "/b/dir/backup.tar.zst?uploads=", false, s3proxy.CreateMultipartUpload},
		{"PUT", "/b/dir/backup.tar.zst?partNumber=3&uploadId=u", false, s3proxy.UploadPart},
		{"POST", "/b/dir/backup.tar.zst?uploadId=u", false, s3proxy.CompleteMultipartUpload},
		{"DELETE", "/b/dir/backup.tar.zst?uploadId=u", false, s3proxy.AbortMultipartUpload},
		{"GET", "/b/dir/backup.tar.zst?uploadId=u", false, s3proxy.ListParts},
		{"GET", "/b/?uploads=&prefix=dir", false, s3proxy.ListMultipartUploads},
		{"PUT", "/b/dir/metadata.json", false, s3proxy.PutObject},
		{"PUT", "/b/dir/copy", true, s3proxy.CopyObject},
		{"GET", "/b/dir/metadata.json", false, s3proxy.GetObject},
		{"HEAD", "/b/dir/metadata.json", false, s3proxy.HeadObject},
		{"DELETE", "/b/dir/metadata.json", false, s3proxy.DeleteObject},
		{"POST", "/b/?delete=", false, s3proxy.DeleteObjects},
		{"GET", "/b/?list-type=2&prefix=dir%2F", false, s3proxy.ListObjects},
		{"GET", "/b?prefix=dir", false, s3proxy.ListObjects},
		{"GET", "/b/?location=", false, s3proxy.GetBucketLocation},
		{"HEAD", "/b/", false, s3proxy.HeadBucket},
		{"PUT", "/b", false, s3proxy.CreateBucket},
		{"GET", "/", false, s3proxy.ListBuckets},
		{"PUT", "/b/?versioning=", false, s3proxy.Other},
	} {
		r := httptest.NewRequest(tc.method, tc.target, http.NoBody)
		if tc.copySource {
			r.Header.Set("X-Amz-Copy-Source", "/b/src")
		}
		if got := s3proxy.Classify(r); got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.method, tc.target, got, tc.want)
		}
	}
}
