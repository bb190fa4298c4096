package plugin_test

import (
	"archive/zip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestReportRedactsEverySecretValue: the report of a Cluster holds its objects, and no Secret
// value of the namespace appears in any file, in clear or base64, even where an object carries
// one (an annotation, a Backup's error); the Secrets are listed by key only; what could not be
// read (logs and my.cnf: no kubelet here) is listed in notes.txt.
func TestReportRedactsEverySecretValue(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n"
	known := map[string]string{
		"root":     "Root-Pw-7f3a9c'\"x\\y",
		"app":      "App-Pw-91bd22",
		"s3key":    "AKIAEXAMPLEKEY123",
		"s3secret": "s3cr3t/with+chars=",
	}
	w.newCluster(t, 2, nil)
	for name, data := range map[string]map[string]string{
		"db-root":      {"username": "root", "password": known["root"]},
		"db-app":       {"username": "app", "password": known["app"]},
		"db-tls":       {"tls.key": pem},
		"backup-store": {"ACCESS_KEY_ID": known["s3key"], "SECRET_ACCESS_KEY": known["s3secret"]},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}, StringData: data}
		if name != "backup-store" {
			s.Labels = map[string]string{v1.ClusterLabel: "db"}
		}
		check.Must(t, w.env.Client.Create(ctx, s))
	}
	// Places a value could leak through: an annotation someone pasted it into, an error message.
	// A client-side apply keeps the whole manifest, JSON inside a string: the password escaped.
	lastApplied, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"note": known["root"]}}})
	w.update(t, func(c *v1.Cluster) {
		c.Annotations = map[string]string{"note": "the password is " + known["root"], "pasted": "a key line MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
			"kubectl.kubernetes.io/last-applied-configuration": string(lastApplied)}
	})
	b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: w.ns}, Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"}}}
	check.Must(t, w.env.Client.Create(ctx, b))
	b.Status.Phase, b.Status.Error = v1.BackupPhaseFailed, "access denied for key "+known["s3key"]+" secret "+known["s3secret"]
	check.Must(t, w.env.Client.Status().Update(ctx, b))

	file := filepath.Join(t.TempDir(), "report.zip")
	out := w.mustRun(t, "report", "db", "-f", file, "--operator-namespace", w.ns)
	if !strings.Contains(out, "written to "+file) || !strings.Contains(out, "not in the report: logs/db-1.log") {
		t.Errorf("output:\n%s", out)
	}
	z, err := zip.OpenReader(file)
	check.Must(t, err)
	defer z.Close()
	files := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		check.Must(t, err)
		b, err := io.ReadAll(r)
		check.Must(t, err)
		files[f.Name] = string(b)
	}
	for _, name := range []string{"cluster.yaml", "backups.yaml", "pods.yaml", "services.yaml", "events.yaml", "secrets.txt", "notes.txt"} {
		if _, ok := files[name]; !ok {
			t.Errorf("no %s in the report (files: %v)", name, keysOf(files))
		}
	}
	if !strings.Contains(files["backups.yaml"], "access denied for key <redacted> secret <redacted>") ||
		!strings.Contains(files["cluster.yaml"], "the password is <redacted>") {
		t.Errorf("the objects are not in the report with their values redacted:\n%s\n%s", files["backups.yaml"], files["cluster.yaml"])
	}
	for _, line := range []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"} {
		for name, content := range files {
			if strings.Contains(content, line) {
				t.Errorf("%s holds a line of the TLS key", name)
			}
		}
	}
	if !strings.Contains(files["secrets.txt"], "db-root (Opaque): password=<redacted>(") {
		t.Errorf("secrets.txt:\n%s", files["secrets.txt"])
	}
	for name, content := range files {
		for what, v := range known {
			// The value, its base64, and its first characters (before any character YAML or
			// JSON would escape).
			escaped, _ := json.Marshal(v)
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), v[:10], string(escaped[1 : len(escaped)-1])} {
				if strings.Contains(content, form) {
					t.Errorf("%s holds the %s secret value (%q)", name, what, form)
				}
			}
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
