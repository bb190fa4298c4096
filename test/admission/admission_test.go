package admission_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

var shared = kubetest.NewShared(kubetest.Options{})

func TestMain(m *testing.M) { shared.Main(m) }

// admissionCase is one object sent to the real API server; wantErr is a substring of the expected
// rejection message, empty when the object must be accepted. update, when set, is applied to the
// created object and sent as an update that wantUpdateErr describes; statusUpdate likewise, sent
// through the status subresource.
type admissionCase struct {
	name          string
	manifest      string
	wantErr       string
	update        func(u *unstructured.Unstructured)
	statusUpdate  func(u *unstructured.Unstructured)
	wantUpdateErr string
}

const validCluster = `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: %NAME%}
spec:
  instances: 3
  storage: {size: 1Gi}
`

const objectStore = `
    objectStore:
      bucket: backups
      endpoint: http://127.0.0.1:9000
      credentials:
        accessKeyId: {name: s3, key: id}
        secretAccessKey: {name: s3, key: secret}
`

const validScheduledBackup = `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: ScheduledBackup
metadata: {name: %NAME%}
spec:
  schedule: "0 0 2 * * *"
  cluster: {name: c}
`

const validBackup = `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Backup
metadata: {name: %NAME%}
spec:
  cluster: {name: c}
`

func runAdmissionCases(t *testing.T, cases []admissionCase) {
	t.Helper()
	env := shared.Get(t)
	ns := env.NewNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := decode(t, strings.ReplaceAll(tc.manifest, "%NAME%", caseName(i)))
			u.SetNamespace(ns)
			err := env.Client.Create(context.Background(), u)
			checkAdmission(t, "create", err, tc.wantErr)
			switch {
			case err != nil:
			case tc.update != nil:
				tc.update(u)
				checkAdmission(t, "update", env.Client.Update(context.Background(), u), tc.wantUpdateErr)
			case tc.statusUpdate != nil:
				tc.statusUpdate(u)
				checkAdmission(t, "status update", env.Client.Status().Update(context.Background(), u), tc.wantUpdateErr)
			}
		})
	}
}

func caseName(i int) string { return fmt.Sprintf("case-%02d", i) }

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("bad test manifest: %v\n%s", err, manifest)
	}
	return u
}

func checkAdmission(t *testing.T, verb string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("%s rejected, want accepted: %v", verb, err)
	case wantErr != "" && err == nil:
		t.Fatalf("%s accepted, want rejected with %q", verb, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("%s rejected with\n  %v\nwant a message containing\n  %q", verb, err, wantErr)
	}
}
