package objectstore

import (
	"errors"
	"net/http"

	"github.com/minio/minio-go/v7"
)

var (
	// ErrNotFound: the object (or the backup's metadata.json) does not exist.
	ErrNotFound = errors.New("not found in the object store")
	// ErrAlreadyExists: a backup with this reference already has a metadata.json.
	ErrAlreadyExists = errors.New("backup already exists in the object store")
	// ErrChecksumMismatch: the bytes read or written differ from the recorded size or sha256.
	ErrChecksumMismatch = errors.New("checksum mismatch")
	// ErrConflict: a conditional write found another version than the one it was based on.
	ErrConflict = errors.New("conditional write conflict")
	// ErrInvalid: a reference, configuration or document is malformed.
	ErrInvalid = errors.New("invalid")
)

// s3Code returns the S3 error code and HTTP status of err, or "" and 0 when err is not an S3
// error response.
func s3Code(err error) (string, int) {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code, resp.StatusCode
	}
	return "", 0
}

// isNotFound reports whether err says the object or upload does not exist. It goes by the S3
// error code only: versitygw answers an unknown access key with 404 XAdminUserNotFound, which
// must not read as "no such object". (A HEAD answer has no body; minio-go names any 404 on an
// object NoSuchKey, so a HEAD cannot tell the two apart.)
func isNotFound(err error) bool {
	code, _ := s3Code(err)
	switch code {
	case "NoSuchKey", "NotFound", "NoSuchUpload":
		return true
	}
	return false
}

// isConflict reports whether err says a conditional write lost: 412 Precondition Failed, or 409
// ConditionalRequestConflict that S3 returns when conditional writes race.
func isConflict(err error) bool {
	code, status := s3Code(err)
	return status == http.StatusPreconditionFailed || code == "PreconditionFailed" ||
		code == "ConditionalRequestConflict"
}
