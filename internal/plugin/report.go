package plugin

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// redacted replaces every secret value in a report.
const redacted = "<redacted>"

// minRedacted is the shortest Secret value a report redacts.
const minRedacted = 6

// ReportOptions are the flags of `report`.
type ReportOptions struct {
	File              string
	LogLines          int64
	OperatorNamespace string
}

func newReportCommand(e *env) *cobra.Command {
	o := ReportOptions{}
	cmd := &cobra.Command{
		Use:   "report CLUSTER",
		Short: "Write a zip archive for a support case: the Cluster and its objects, Events, logs, my.cnf; every Secret value redacted",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			cs, cfg, err := e.clientset()
			if err != nil {
				return err
			}
			file := o.File
			if file == "" {
				file = fmt.Sprintf("report_%s_%s_%s.zip", ns, args[0], e.clock.Now().UTC().Format("20060102T150405Z"))
			}
			var buf bytes.Buffer
			r := &reporter{c: c, cs: cs, cfg: cfg, ns: ns, opts: o, now: e.clock.Now()}
			notes, err := r.write(cmd.Context(), args[0], &buf)
			if err != nil {
				return err
			}
			if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
				return fmt.Errorf("writing %s: %w", file, err)
			}
			fmt.Fprintf(e.streams.Out, "report of Cluster %s/%s written to %s (%d bytes)\n", ns, args[0], file, buf.Len())
			for _, n := range notes {
				fmt.Fprintf(e.streams.Out, "  not in the report: %s\n", n)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.File, "file", "f", "", "the archive to write (default report_<namespace>_<cluster>_<time>.zip)")
	f.Int64Var(&o.LogLines, "log-lines", 5000, "lines of each log, from its end")
	f.StringVar(&o.OperatorNamespace, "operator-namespace", DefaultOperatorNamespace, "namespace of the operator")
	return cmd
}

// reporter gathers one report.
type reporter struct {
	c    client.Client
	cs   kubernetes.Interface
	cfg  *rest.Config
	ns   string
	opts ReportOptions
	now  time.Time
	// files are the report's files by name, secrets the values redacted from all of them.
	files   map[string][]byte
	secrets [][]byte
	notes   []string
}

// write gathers the report of cluster into w as a zip archive. What cannot be read (logs, my.cnf
// of a Pod that is not running, objects the account may not read) is listed in the returned
// notes and in notes.txt, and left out.
func (r *reporter) write(ctx context.Context, cluster string, w io.Writer) ([]string, error) {
	r.files = map[string][]byte{}
	c, err := getCluster(ctx, r.c, r.ns, cluster)
	if err != nil {
		return nil, err
	}
	secrets, err := r.collectSecrets(ctx)
	if err != nil {
		return nil, err
	}
	r.object("cluster.yaml", c)
	owned := client.MatchingLabels{v1.ClusterLabel: c.Name}
	r.list(ctx, "backups.yaml", &v1.BackupList{}, func(o client.Object) bool { return o.(*v1.Backup).Spec.Cluster.Name == c.Name })
	r.list(ctx, "scheduledbackups.yaml", &v1.ScheduledBackupList{},
		func(o client.Object) bool { return o.(*v1.ScheduledBackup).Spec.Cluster.Name == c.Name })
	r.list(ctx, "pods.yaml", &corev1.PodList{}, nil, owned)
	r.list(ctx, "persistentvolumeclaims.yaml", &corev1.PersistentVolumeClaimList{}, nil, owned)
	r.list(ctx, "services.yaml", &corev1.ServiceList{}, nil, owned)
	r.list(ctx, "events.yaml", &corev1.EventList{}, nil)
	var lease coordinationv1.Lease
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: specs.PrimaryLeaseName(c.Name)}, &lease); err != nil {
		r.note("lease.yaml", err)
	} else {
		r.object("lease.yaml", &lease)
	}
	r.secretsSummary(c, secrets)
	pods, err := instancePods(ctx, r.c, c)
	if err != nil {
		r.note("instance logs", err)
	}
	for _, p := range pods {
		r.log(ctx, "logs/"+p.Name+".log", p.Namespace, p.Name, mysqlContainer)
		r.exec(ctx, "mycnf/"+p.Name+".cnf", p.Name, "cat", "/controller/run/my.cnf")
	}
	ops, err := r.cs.CoreV1().Pods(r.opts.OperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: OperatorSelector})
	if err != nil {
		r.note("operator logs", err)
	} else {
		for _, p := range ops.Items {
			r.log(ctx, "logs/operator-"+p.Name+".log", p.Namespace, p.Name, "")
		}
	}
	if len(r.notes) > 0 {
		r.files["notes.txt"] = []byte(strings.Join(r.notes, "\n") + "\n")
	}
	return r.notes, r.zip(w)
}

// collectSecrets reads every Secret of the namespace, its values only to redact them (they are
// never written), and returns them for the summary.
func (r *reporter) collectSecrets(ctx context.Context) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.c.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		// Without them the report could not prove it redacts them: refuse rather than risk it.
		return nil, fmt.Errorf("listing the Secrets of %s to redact their values: %w (report needs list on secrets)", r.ns, err)
	}
	for _, s := range list.Items {
		for k, v := range s.Data {
			// A username is no secret, and a value this short would blank out common words.
			if k != corev1.BasicAuthUsernameKey && len(bytes.TrimSpace(v)) >= minRedacted {
				r.secrets = append(r.secrets, secretForms(v)...)
			}
		}
	}
	// The longest first, so that a value containing another is replaced whole.
	slices.SortFunc(r.secrets, func(a, b []byte) int { return len(b) - len(a) })
	return list.Items, nil
}

// secretForms are the ways value can appear in an object, a log or a message: as it is and
// trimmed, base64-encoded (standard and URL alphabets, padded or not), JSON-escaped once and twice
// (a log line's field, a JSON document inside a JSON string such as last-applied-configuration),
// and, for a multi-line value such as a PEM key, each of its long lines.
func secretForms(value []byte) [][]byte {
	var out [][]byte
	add := func(b []byte) {
		if len(b) >= minRedacted && !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, b) }) {
			out = append(out, b)
		}
	}
	for _, v := range [][]byte{value, bytes.TrimSpace(value)} {
		add(v)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			add([]byte(enc.EncodeToString(v)))
		}
		once := jsonEscaped(v)
		add(once)
		add(jsonEscaped(once))
	}
	for _, line := range bytes.Split(value, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) >= 16 && !bytes.HasPrefix(line, []byte("-----")) {
			add(line)
			add(jsonEscaped(line))
		}
	}
	return out
}

// jsonEscaped is v as it appears inside a JSON string, without the quotes.
func jsonEscaped(v []byte) []byte {
	b, _ := json.Marshal(string(v))
	return b[1 : len(b)-1]
}

// secretsSummary lists the Cluster's Secrets (of secrets, the namespace's) with their keys and
// sizes, never their values.
func (r *reporter) secretsSummary(c *v1.Cluster, secrets []corev1.Secret) {
	var b strings.Builder
	for _, s := range secrets {
		if s.Labels[v1.ClusterLabel] != c.Name {
			continue
		}
		fmt.Fprintf(&b, "%s (%s):", s.Name, s.Type)
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%s(%d bytes)", k, redacted, len(s.Data[k]))
		}
		b.WriteString("\n")
	}
	r.files["secrets.txt"] = []byte(b.String())
}

// object writes o as YAML, with every secret value redacted in its strings before they are
// encoded: a value YAML would quote or escape is still found.
func (r *reporter) object(name string, o any) {
	j, err := json.Marshal(o)
	if err != nil {
		r.note(name, err)
		return
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		r.note(name, err)
		return
	}
	b, err := yaml.Marshal(r.redactValue(v))
	if err != nil {
		r.note(name, err)
		return
	}
	r.files[name] = b
}

// redactValue redacts every string (keys included) of a decoded JSON value.
func (r *reporter) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return string(r.redact([]byte(x)))
	case []any:
		for i := range x {
			x[i] = r.redactValue(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[string(r.redact([]byte(k)))] = r.redactValue(e)
		}
		return out
	}
	return v
}

// list writes the objects of list in the namespace that keep accepts (all when nil).
func (r *reporter) list(ctx context.Context, name string, list client.ObjectList, keep func(client.Object) bool, opts ...client.ListOption) {
	if err := r.c.List(ctx, list, append([]client.ListOption{client.InNamespace(r.ns)}, opts...)...); err != nil {
		r.note(name, err)
		return
	}
	if keep != nil {
		items, err := metaItems(list)
		if err != nil {
			r.note(name, err)
			return
		}
		var kept []client.Object
		for _, o := range items {
			if keep(o) {
				kept = append(kept, o)
			}
		}
		r.object(name, kept)
		return
	}
	r.object(name, list)
}

func (r *reporter) log(ctx context.Context, name, ns, pod, container string) {
	opts := &corev1.PodLogOptions{Container: container, TailLines: &r.opts.LogLines}
	b, err := r.cs.CoreV1().Pods(ns).GetLogs(pod, opts).DoRaw(ctx)
	if err != nil {
		r.note(name, err)
		return
	}
	r.files[name] = b
}

func (r *reporter) exec(ctx context.Context, name, pod string, command ...string) {
	b, err := execOutput(ctx, r.cs, r.cfg, r.ns, pod, mysqlContainer, command...)
	if err != nil {
		r.note(name, err)
		return
	}
	r.files[name] = b
}

func (r *reporter) note(what string, err error) {
	r.notes = append(r.notes, what+": "+string(r.redact([]byte(err.Error()))))
}

// redact replaces every secret value in b.
func (r *reporter) redact(b []byte) []byte {
	for _, s := range r.secrets {
		b = bytes.ReplaceAll(b, s, []byte(redacted))
	}
	return b
}

// zip writes the files, redacted, by name.
func (r *reporter) zip(w io.Writer) error {
	z := zip.NewWriter(w)
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f, err := z.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: r.now})
		if err != nil {
			return err
		}
		if _, err := f.Write(r.redact(r.files[n])); err != nil {
			return err
		}
	}
	return z.Close()
}

// metaItems are the objects of a list.
func metaItems(list client.ObjectList) ([]client.Object, error) {
	objs, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not an object", o)
		}
		out = append(out, co)
	}
	return out, nil
}
