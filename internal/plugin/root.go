package plugin

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/version"
)

// env is what every verb needs: where to talk, in which namespace, and the time.
type env struct {
	flags   *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	clock   clock.PassiveClock
}

// client returns a client for the configured cluster and the namespace to work in.
func (e *env) client() (client.Client, string, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := e.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("resolving the namespace: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		return nil, "", fmt.Errorf("creating a client: %w", err)
	}
	return c, ns, nil
}

// clientset returns a client-go clientset (logs, exec) and the REST config behind it.
func (e *env) clientset() (*kubernetes.Clientset, *rest.Config, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a clientset: %w", err)
	}
	return cs, cfg, nil
}

// NewRootCommand returns `kubectl cloudnative-mysql` with every verb.
func NewRootCommand(streams genericiooptions.IOStreams, clk clock.PassiveClock) *cobra.Command {
	e := &env{flags: genericclioptions.NewConfigFlags(true), streams: streams, clock: clk}
	root := &cobra.Command{
		Use:           "kubectl-cloudnative_mysql",
		Short:         "Manage cloudnative-mysql clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	e.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newBackupCommand(e), newFenceCommand(e), newPromoteCommand(e), newReloadCommand(e), newRestartCommand(e),
		newScheduleCommand(e), newStatusCommand(e), newLogsCommand(e), newMySQLCommand(e), newReportCommand(e), newInstallCommand(e),
		newVersionCommand(streams))
	return root
}

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(streams.Out, "kubectl-cloudnative_mysql %s\n", version.Version)
		},
	}
}
