// Package helmtest finds the Helm client the chart's tests run: $CNM_HELM, or
// ${XDG_CACHE_HOME:-$HOME/.cache}/cloudnative-mysql/bin/helm-v3.22.0/helm, as built by
// `bash hack/substrate.sh helm` (or `make test`). A missing client fails the test with that hint;
// it is never a reason to skip.
package helmtest
