package helm

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// sameObjects fails for every object of want the chart did not render the same, Helm's labels
// apart, and for every object it rendered beyond them.
func sameObjects(t *testing.T, got, want []*unstructured.Unstructured) {
	t.Helper()
	g, w := byKey(t, got), byKey(t, want)
	for k, wo := range w {
		gobj, ok := g[k]
		if !ok {
			t.Errorf("the chart does not render %s", k)
			continue
		}
		if a, b := normalised(gobj), normalised(wo); !reflect.DeepEqual(a, b) {
			ay, _ := yaml.Marshal(a)
			by, _ := yaml.Marshal(b)
			t.Errorf("%s differs:\n--- chart\n%s\n--- dist\n%s", k, ay, by)
		}
	}
	for k := range g {
		if w[k] == nil {
			t.Errorf("the chart renders %s, which is not in dist", k)
		}
	}
}

// without drops the objects of the given kinds.
func without(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), func(u *unstructured.Unstructured) bool { return slices.Contains(kinds, u.GetKind()) })
}

// TestDefaultRenderIsTheDistInstall: with the default values, the chart (its CRDs included)
// renders the objects of dist/install.yaml, each the same but for Helm's labels, less the
// operator's Namespace: Helm installs into a namespace that exists (or --create-namespace) and
// records the release there before it creates anything. Every object carries Helm's labels.
func TestDefaultRenderIsTheDistInstall(t *testing.T) {
	got := template(t, chartPath, operatorNamespace, "--include-crds")
	dist := distObjects(t, "install.yaml")
	if ns := find(t, dist, "Namespace", operatorNamespace); ns == nil || len(without(dist, "Namespace")) != len(dist)-1 {
		t.Fatal("dist/install.yaml should hold exactly one Namespace, the operator's")
	}
	sameObjects(t, got, without(dist, "Namespace"))
	for _, o := range got {
		if o.GetKind() == "CustomResourceDefinition" {
			continue // crds/ is installed as it is, no template touches it
		}
		if o.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" || o.GetLabels()["app.kubernetes.io/instance"] != "cnm" {
			t.Errorf("%s lacks Helm's labels: %v", key(o), o.GetLabels())
		}
	}
}

// TestNamespaceScopedRenderIsTheDistNamespacedInstall: namespaceScoped with the namespace
// config/namespaced watches renders dist/install-namespaced.yaml less what a cluster
// administrator installs (CRDs, left out with --skip-crds; admission policies) and the Namespace, plus the RoleBinding that
// config/namespaced/watched_namespace.yaml gives the watched namespace; in another release
// namespace, nothing names the default namespace any more.
func TestNamespaceScopedRenderIsTheDistNamespacedInstall(t *testing.T) {
	got := template(t, chartPath, operatorNamespace, "--skip-crds",
		"--set", "namespaceScoped=true", "--set", "watchNamespaces={cloudnative-mysql-apps}")
	want := without(distObjects(t, "install-namespaced.yaml"), "Namespace", "CustomResourceDefinition",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
	watched := find(t, got, "RoleBinding", "cloudnative-mysql-manager")
	if watched.GetNamespace() != "cloudnative-mysql-apps" {
		t.Errorf("the operator's RoleBinding is in %q, not the watched namespace", watched.GetNamespace())
	}
	if ref, _, _ := unstructured.NestedString(watched.Object, "roleRef", "name"); ref != "cloudnative-mysql-manager" {
		t.Errorf("the watched namespace's RoleBinding grants %q", ref)
	}
	sameObjects(t, slices.DeleteFunc(slices.Clone(got), func(u *unstructured.Unstructured) bool { return u == watched }), want)
	for _, o := range got {
		if o.GetKind() == "ClusterRoleBinding" && o.GetName() == "cloudnative-mysql-manager" {
			t.Error("the namespace-scoped mode binds the operator cluster-wide")
		}
	}

	other := template(t, chartPath, "dbops", "--skip-crds", "--set", "namespaceScoped=true",
		"--set", "watchNamespaces={team-a,team-b}")
	var bound []string
	for _, o := range other {
		y, _ := yaml.Marshal(o.Object)
		if strings.Contains(string(y), operatorNamespace) {
			t.Errorf("%s still names %s", key(o), operatorNamespace)
		}
		if o.GetKind() == "RoleBinding" {
			bound = append(bound, o.GetNamespace())
		}
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			t.Errorf("the namespace-scoped mode renders %s", key(o))
		}
	}
	if slices.Sort(bound); !slices.Equal(bound, []string{"dbops", "team-a", "team-b"}) {
		t.Errorf("RoleBindings in %v, want the leader election's in dbops and one per watched namespace", bound)
	}
}

// TestNamespaceScopedNeedsWatchedNamespaces: namespaceScoped without watchNamespaces would bind
// the operator nowhere; the render fails and says why.
func TestNamespaceScopedNeedsWatchedNamespaces(t *testing.T) {
	_, err := helm(t, "template", "cnm", chartPath, "--set", "namespaceScoped=true")
	if err == nil || !strings.Contains(err.Error(), "namespaceScoped needs watchNamespaces") {
		t.Errorf("rendered, or failed for another reason: %v", err)
	}
}
