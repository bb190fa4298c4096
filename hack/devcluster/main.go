// Command devcluster runs the local control plane of `make demo`: etcd, kube-apiserver and
// kube-controller-manager from the substrate cache, with the CRDs installed. It writes an admin
// kubeconfig to the path given by -write-kubeconfig and runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

func main() {
	out := flag.String("write-kubeconfig", "", "where to write the admin kubeconfig")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "devcluster: -write-kubeconfig is required")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfigPath string) error {
	env, err := kubetest.Start(kubetest.Options{ControllerManager: true})
	if err != nil {
		return err
	}
	defer env.Stop()
	kubeconfig, err := env.AdminKubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfigPath+".tmp", kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if err := os.Rename(kubeconfigPath+".tmp", kubeconfigPath); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	fmt.Fprintf(os.Stderr, "devcluster: control plane up at %s; kubeconfig %s\n", env.Config.Host, kubeconfigPath)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "devcluster: stopping")
	return nil
}
