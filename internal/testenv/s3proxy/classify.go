package s3proxy

import (
	"net/http"
	"net/url"
	"strings"
)

// Kind is the S3 operation a request performs.
type Kind string

// The operations the proxy tells apart; anything else is Other.
const (
	CreateMultipartUpload   Kind = "CreateMultipartUpload"
	UploadPart              Kind = "UploadPart"
	CompleteMultipartUpload Kind = "CompleteMultipartUpload"
	AbortMultipartUpload    Kind = "AbortMultipartUpload"
	ListParts               Kind = "ListParts"
	ListMultipartUploads    Kind = "ListMultipartUploads"
	PutObject               Kind = "PutObject"
	CopyObject              Kind = "CopyObject"
	GetObject               Kind = "GetObject"
	HeadObject              Kind = "HeadObject"
	DeleteObject            Kind = "DeleteObject"
	DeleteObjects           Kind = "DeleteObjects"
	ListObjects             Kind = "ListObjects"
	GetBucketLocation       Kind = "GetBucketLocation"
	HeadBucket              Kind = "HeadBucket"
	CreateBucket            Kind = "CreateBucket"
	ListBuckets             Kind = "ListBuckets"
	Other                   Kind = "Other"
)

// Classify returns the S3 operation of a path-style request.
func Classify(r *http.Request) Kind {
	q := r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	if r.URL.Path == "/" || r.URL.Path == "" {
		if r.Method == http.MethodGet {
			return ListBuckets
		}
		return Other
	}
	if isBucketPath(r.URL) {
		return classifyBucket(r.Method, has)
	}
	switch r.Method {
	case http.MethodPost:
		switch {
		case has("uploads"):
			return CreateMultipartUpload
		case has("uploadId"):
			return CompleteMultipartUpload
		}
	case http.MethodPut:
		switch {
		case has("uploadId") && has("partNumber"):
			return UploadPart
		case r.Header.Get("X-Amz-Copy-Source") != "":
			return CopyObject
		case len(q) == 0:
			return PutObject
		}
	case http.MethodGet:
		switch {
		case has("uploadId"):
			return ListParts
		case len(q) == 0 || has("partNumber") || has("versionId"):
			return GetObject
		}
	case http.MethodHead:
		return HeadObject
	case http.MethodDelete:
		if has("uploadId") {
			return AbortMultipartUpload
		}
		return DeleteObject
	}
	return Other
}

func classifyBucket(method string, has func(string) bool) Kind {
	switch method {
	case http.MethodGet:
		switch {
		case has("uploads"):
			return ListMultipartUploads
		case has("location"):
			return GetBucketLocation
		case has("list-type") || !hasSubresource(has):
			return ListObjects
		}
	case http.MethodHead:
		return HeadBucket
	case http.MethodPut:
		if !hasSubresource(has) {
			return CreateBucket
		}
	case http.MethodPost:
		if has("delete") {
			return DeleteObjects
		}
	}
	return Other
}

// hasSubresource reports whether a bucket request names a configuration subresource.
func hasSubresource(has func(string) bool) bool {
	for _, k := range []string{"acl", "cors", "policy", "tagging", "versioning", "lifecycle",
		"encryption", "object-lock", "ownershipControls", "versions", "uploads", "location"} {
		if has(k) {
			return true
		}
	}
	return false
}

// isBucketPath reports whether a path-style URL names a bucket ("/b" or "/b/") and no object.
func isBucketPath(u *url.URL) bool {
	return !strings.Contains(strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/"), "/")
}
