// Package s3proxy is a fault-injecting HTTP reverse proxy to put in front of a real S3 server in
// tests.
//
// The proxy forwards every request unchanged, keeping the Host header the client signed, so
// SigV4 still verifies. It numbers requests from 1 (Reset starts again), classifies each into an
// S3 operation (Kind: UploadPart, CompleteMultipartUpload, GetObject...) from its method, path
// and query, and counts them. Buckets must be addressed path-style.
//
// A Fault pairs a predicate on the request (Nth, OfKind, MethodPath, All) with an Action:
//
//   - Status: answer with an S3 error document and that HTTP status, without forwarding;
//   - Drop: close the connection without forwarding or answering;
//   - DropResponse: forward (the server acts on the request), then close the connection instead
//     of answering, as when a response is lost;
//   - CutRequestBody: forward only the first n bytes of the body, then break both connections;
//   - CutResponseBody: answer with the headers and the first n bytes of the body, then close;
//   - CorruptResponseBody: flip the bits of the body byte at offset n;
//   - Delay: wait, then forward.
//
// A fault fires on at most Times matching requests (0: every one). Faults are checked in the
// order they were added and the first that matches and has not used up its Times applies.
package s3proxy
