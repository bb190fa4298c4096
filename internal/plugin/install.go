package plugin

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudnative-mysql/cloudnative-mysql/dist"
)

// What `install generate` changes in the one-file installs (hack/installgen).
const (
	installNamespace   = "cloudnative-mysql-system"
	installImage       = "cloudnative-mysql/operator:dev"
	installWatchArg    = "--watch-namespaces=cloudnative-mysql-apps"
	installSkipArg     = "--schedule-skip-immediately=false"
	watchedRoleBinding = `---
# Grants the operator its permissions in the watched namespace %[1]s.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
    app.kubernetes.io/name: cloudnative-mysql
  name: cloudnative-mysql-manager
  namespace: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cloudnative-mysql-manager
subjects:
- kind: ServiceAccount
  name: cloudnative-mysql-manager
  namespace: %[2]s
`
)

// InstallOptions are the flags of `install generate`.
type InstallOptions struct {
	// Namespace is the operator's namespace.
	Namespace string
	// WatchNamespaces, when set, makes the install namespace-scoped: the operator watches only
	// these namespaces, with a RoleBinding in each.
	WatchNamespaces []string
	// Image is the operator's image.
	Image string
	// ScheduleSkipImmediately is the operator's --schedule-skip-immediately.
	ScheduleSkipImmediately bool
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// imageRef is what a plain YAML scalar can carry as an image reference: a name with a
	// registry, path, tag or digest.
	imageRef = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._:/-]*(@sha256:[a-f0-9]{64})?$`)
)

// GenerateInstall writes the install manifest of this plugin's version with o applied.
func GenerateInstall(w io.Writer, o InstallOptions) error {
	for _, ns := range append([]string{o.Namespace}, o.WatchNamespaces...) {
		if len(ns) > 63 || !dnsLabel.MatchString(ns) {
			return fmt.Errorf("%q is not a namespace name", ns)
		}
	}
	if !imageRef.MatchString(o.Image) {
		return fmt.Errorf("%q is not an image reference", o.Image)
	}
	m := dist.Install
	if len(o.WatchNamespaces) > 0 {
		m = dist.InstallNamespaced
	}
	// The operator's namespace first: a watched namespace may contain the default's name.
	m = bytes.ReplaceAll(m, []byte(installNamespace), []byte(o.Namespace))
	m = bytes.ReplaceAll(m, []byte(strings.ReplaceAll(installWatchArg, installNamespace, o.Namespace)),
		[]byte("--watch-namespaces="+strings.Join(o.WatchNamespaces, ",")))
	m = bytes.ReplaceAll(m, []byte(installImage), []byte(o.Image))
	if o.ScheduleSkipImmediately {
		m = bytes.ReplaceAll(m, []byte(installSkipArg), []byte("--schedule-skip-immediately=true"))
	}
	if _, err := w.Write(m); err != nil {
		return err
	}
	for _, ns := range o.WatchNamespaces {
		if _, err := fmt.Fprintf(w, watchedRoleBinding, ns, o.Namespace); err != nil {
			return err
		}
	}
	return nil
}

func newInstallCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "install", Short: "The operator's install manifest"}
	o := InstallOptions{}
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Print the install manifest of this plugin's version (apply it with kubectl apply --server-side -f -)",
		Long: "Prints the operator's one-file install (CRDs, RBAC, admission policies, the Deployment) of this plugin's\n" +
			"version. With --watch-namespaces the operator watches only those namespaces and gets a RoleBinding in\n" +
			"each instead of a ClusterRoleBinding; the CRDs and the cluster-scoped admission policies still need a\n" +
			"cluster administrator once.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return GenerateInstall(e.streams.Out, o) },
	}
	f := gen.Flags()
	f.StringVar(&o.Namespace, "operator-namespace", installNamespace, "namespace of the operator")
	f.StringSliceVar(&o.WatchNamespaces, "watch-namespaces", nil, "namespaces the operator watches (default: all), comma-separated")
	f.StringVar(&o.Image, "image", installImage, "the operator's image")
	f.BoolVar(&o.ScheduleSkipImmediately, "schedule-skip-immediately", false,
		"what a ScheduledBackup without spec.skipImmediately does (the operator's --schedule-skip-immediately)")
	cmd.AddCommand(gen)
	return cmd
}
