// Package version holds the build's version, set at link time with
// -X github.com/cloudnative-mysql/cloudnative-mysql/internal/version.Version=...
package version

// Version is the release this binary was built from; "dev" for local builds.
var Version = "dev"
