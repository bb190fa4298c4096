package verification_test

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// shared is the package's control plane, started on first use so the pure decision tests of this
// package run without it.
var shared = kubetest.NewShared(kubetest.Options{ControllerManager: true})

func TestMain(m *testing.M) { shared.Main(m) }
