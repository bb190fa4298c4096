package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// bench is one run: the objects it created, the operator process and the observers.
type bench struct {
	o          options
	env        *kubetest.Env
	dir        string
	namespaces []string
	names      []client.ObjectKey
	op         *proc.Child
	metrics    string
}

func newBench(ctx context.Context, env *kubetest.Env, o options) (*bench, error) {
	dir, err := os.MkdirTemp("", "bench-scheduledbackup-")
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, env: env, dir: dir}
	for i := range o.namespaces {
		ns := fmt.Sprintf("bench-%d", i)
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		if err := env.Client.Create(ctx, clusterObject(ns)); err != nil {
			return nil, fmt.Errorf("creating the Cluster of %s: %w", ns, err)
		}
		b.namespaces = append(b.namespaces, ns)
	}
	for i := range o.schedules {
		b.names = append(b.names, client.ObjectKey{Namespace: b.namespaces[i%o.namespaces], Name: fmt.Sprintf("sb-%04d", i)})
	}
	return b, b.createSchedules(ctx)
}

// clusterObject is an inert Cluster (no Cluster controller runs here) the schedules point at. It
// has no spec.backup, so the operator's Backup controller fails each of its Backups at once: no
// object store is configured.
func clusterObject(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": "db", "namespace": ns},
		"spec":     map[string]any{"instances": int64(1), "storage": map[string]any{"size": "1Gi"}},
	}}
}

func (b *bench) createSchedules(ctx context.Context) error {
	cron := fmt.Sprintf("*/%d * * * * *", int(b.o.cadence.Seconds()))
	var wg sync.WaitGroup
	errs := make(chan error, len(b.names))
	keys := make(chan client.ObjectKey)
	for range 16 {
		wg.Go(func() {
			for k := range keys {
				sb := &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace},
					Spec: v1.ScheduledBackupSpec{Schedule: cron, Cluster: v1.LocalObjectReference{Name: "db"}}}
				if err := b.env.Client.Create(ctx, sb); err != nil {
					errs <- fmt.Errorf("creating ScheduledBackup %s: %w", k, err)
				}
			}
		})
	}
	for _, k := range b.names {
		keys <- k
	}
	close(keys)
	wg.Wait()
	close(errs)
	return <-errs
}

// startOperator runs this binary in operator mode against the API server, with the credentials
// operatorCredentials gives it.
func (b *bench) startOperator(ctx context.Context) error {
	cfg, err := operatorCredentials(ctx, b.env, b.o.adminCredentials)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(b.dir, "kubeconfig")
	if err := writeKubeconfig(cfg, kubeconfig); err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	b.metrics = "http://" + addr + "/metrics"
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(b.dir, "operator.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-run-operator", "-metrics-addr", addr, "-workers", fmt.Sprint(b.o.workers),
		fmt.Sprintf("-stand-in=%v", b.o.standIn))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if b.op, err = proc.StartTied(cmd); err != nil {
		return fmt.Errorf("starting the operator process: %w", err)
	}
	return nil
}

// stopOperator sends SIGTERM and returns the process's CPU time and peak RSS.
func (b *bench) stopOperator() (cpu time.Duration, maxRSS int64, err error) {
	_ = b.op.Stop(30 * time.Second)
	ru, ok := b.op.State().SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, fmt.Errorf("no resource usage for the operator process")
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, ru.Maxrss * 1024, nil
}

func (b *bench) cleanup() {
	if b.op != nil {
		b.op.Kill()
	}
	_ = os.RemoveAll(b.dir)
}

func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["bench"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
