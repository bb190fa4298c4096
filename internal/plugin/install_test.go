package plugin_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/dist"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// installObjects decodes every document of an install manifest.
func installObjects(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		check.Must(t, err)
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		check.Must(t, utilyaml.Unmarshal(doc, &u.Object))
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// TestInstallGenerate: the generated install, with a namespace, an image, watched namespaces and
// the skipImmediately default, puts every namespaced object in the operator's namespace, binds
// the operator in each watched namespace and not cluster-wide (only the metrics authentication's
// TokenReview binding is), names the operator's service
// account in the admission policy, and every object passes the real API server's validation (a
// server-side dry run).
func TestInstallGenerate(t *testing.T) {
	w := newWorld(t)
	out := w.mustRun(t, "install", "generate", "--operator-namespace", "dbops", "--image", "registry.example/op:1.2",
		"--watch-namespaces", "team-a,team-b", "--schedule-skip-immediately")
	objs := installObjects(t, out)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "cloudnative-mysql-manager" {
			t.Error("a namespace-scoped install binds the operator cluster-wide")
		}
		if ns := o.GetNamespace(); ns != "" && ns != "dbops" && o.GetKind() != "RoleBinding" {
			t.Errorf("%s %s in namespace %s", o.GetKind(), o.GetName(), ns)
		}
	}
	if kinds["RoleBinding"] != 3 || kinds["CustomResourceDefinition"] != 3 || kinds["Deployment"] != 1 {
		t.Errorf("kinds %v", kinds)
	}
	for _, want := range []string{"--watch-namespaces=team-a,team-b", "--schedule-skip-immediately=true",
		"image: registry.example/op:1.2", "system:serviceaccount:dbops:cloudnative-mysql-manager", "namespace: team-b"} {
		if !strings.Contains(out, want) {
			t.Errorf("the manifest lacks %q", want)
		}
	}
	if strings.Contains(out, "cloudnative-mysql-system") || strings.Contains(out, "operator:dev") {
		t.Error("the manifest still names the default namespace or image")
	}
	// The watched namespaces and the operator's exist on a real cluster before the install.
	for _, ns := range []string{"dbops", "team-a", "team-b"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		check.Must(t, client.IgnoreAlreadyExists(w.env.Client.Create(context.Background(), u)))
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition" {
			continue // the test's API server has the CRDs already
		}
		if err := w.env.Client.Create(context.Background(), o, client.DryRunAll); err != nil {
			t.Errorf("%s %s refused by the API server: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if _, err := w.run("install", "generate", "--operator-namespace", "Bad_NS"); err == nil {
		t.Error("an invalid namespace was accepted")
	}
	for _, image := range []string{"{x}", "*a", "a b", "op:1\nkind: Secret"} {
		if _, err := w.run("install", "generate", "--image", image); err == nil {
			t.Errorf("the image %q was accepted", image)
		}
	}
}

// TestInstallGenerateWatchingANamespaceNamedLikeTheDefault: a watched namespace whose name
// contains the default operator namespace's is kept as given.
func TestInstallGenerateWatchingANamespaceNamedLikeTheDefault(t *testing.T) {
	var buf bytes.Buffer
	check.Must(t, plugin.GenerateInstall(&buf, plugin.InstallOptions{Namespace: "ops", Image: "registry.example:5000/op:1",
		WatchNamespaces: []string{"cloudnative-mysql-system", "cloudnative-mysql-system-prod"}}))
	out := buf.String()
	if !strings.Contains(out, "--watch-namespaces=cloudnative-mysql-system,cloudnative-mysql-system-prod") ||
		!strings.Contains(out, "namespace: cloudnative-mysql-system-prod") || !strings.Contains(out, "image: registry.example:5000/op:1") {
		t.Errorf("the manifest rewrote the watched namespaces or the image:\n%s", grepLines(out, "watch-namespaces", "image:"))
	}
}

func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestInstallGenerateDefaultsAreTheShippedInstall: without options the plugin prints
// dist/install.yaml byte for byte.
func TestInstallGenerateDefaultsAreTheShippedInstall(t *testing.T) {
	w := newWorld(t)
	if out := w.mustRun(t, "install", "generate"); out != string(dist.Install) {
		t.Error("install generate without options differs from dist/install.yaml")
	}
}
