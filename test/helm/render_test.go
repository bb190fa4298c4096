package helm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/helmtest"
)

const (
	chartPath         = "charts/cloudnative-mysql"
	operatorNamespace = "cloudnative-mysql-system"
	// kubeVersion is the Kubernetes the renders assume (the substrate's).
	kubeVersion = "1.34.10"
)

// helmLabels are the labels the chart adds to what config/ holds.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}

// root is the repository.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "../.."))
}

// helm runs the Helm client in the repository with its own configuration directories and
// returns its standard output; its error carries the standard error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin, err := helmtest.Binary()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = root(t), helmtest.Env(t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(err.Error() + ": " + stderr.String())
	}
	return stdout.String(), nil
}

// template renders chart in namespace ns with the release name cnm and the given flags, and
// decodes every object strictly.
func template(t *testing.T, chart, ns string, flags ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helm(t, append([]string{"template", "cnm", chart, "--namespace", ns, "--kube-version", kubeVersion}, flags...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v", flags, err)
	}
	return decodeAll(t, out, true)
}

// scheme knows every kind the chart may render but the Prometheus Operator's.
var scheme = func() *k8sruntime.Scheme {
	s := operator.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

var strictDecoder = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeAll splits a multi-document manifest. With strict, each object must decode with the
// scheme, no field unknown or repeated; the Prometheus Operator's kinds (monitoring.coreos.com),
// which the scheme does not know, only as YAML objects.
func decodeAll(t *testing.T, manifest string, strict bool) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		if strict && u.GroupVersionKind().Group != "monitoring.coreos.com" {
			if _, _, err := strictDecoder.Decode(doc, nil, nil); err != nil {
				t.Errorf("%s %s does not decode strictly: %v", u.GetKind(), u.GetName(), err)
			}
		}
		out = append(out, u)
	}
}

// distObjects decodes a file of dist/.
func distObjects(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "dist", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, string(b), true)
}

// normalised is the object less Helm's labels (and a labels map left empty).
func normalised(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		labels, found, _ := unstructured.NestedStringMap(c.Object, path...)
		if !found {
			continue
		}
		for _, l := range helmLabels {
			delete(labels, l)
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(c.Object, path...)
		} else {
			_ = unstructured.SetNestedStringMap(c.Object, labels, path...)
		}
	}
	return c.Object
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// byKey indexes objects by kind, namespace and name, failing on a duplicate.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if m[key(o)] != nil {
			t.Errorf("%s twice", key(o))
		}
		m[key(o)] = o
	}
	return m
}

// find returns the object of kind and name, failing when there is none.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}
