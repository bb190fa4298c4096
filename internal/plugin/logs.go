package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// OperatorSelector selects the operator's Pods (config/manager).
const OperatorSelector = "app.kubernetes.io/name=cloudnative-mysql,app.kubernetes.io/component=operator"

// DefaultOperatorNamespace is where the install puts the operator.
const DefaultOperatorNamespace = "cloudnative-mysql-system"

// LogsOptions are the flags of `logs`.
type LogsOptions struct {
	Follow            bool
	Tail              int64
	Operator          bool
	OperatorNamespace string
}

func newLogsCommand(e *env) *cobra.Command {
	o := LogsOptions{}
	cmd := &cobra.Command{
		Use:   "logs CLUSTER [INSTANCE] | logs --operator",
		Short: "Print the instances' logs (instance manager and mysqld), each line prefixed with its Pod; --operator for the operator's",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case o.Operator && len(args) > 0:
				return fmt.Errorf("--operator prints the operator's logs: it takes no CLUSTER or INSTANCE")
			case !o.Operator && (len(args) < 1 || len(args) > 2):
				return fmt.Errorf("usage: logs CLUSTER [INSTANCE], or logs --operator")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := e.client()
			if err != nil {
				return err
			}
			cs, _, err := e.clientset()
			if err != nil {
				return err
			}
			var streams []logStream
			if o.Operator {
				pods, err := cs.CoreV1().Pods(o.OperatorNamespace).List(cmd.Context(), metav1.ListOptions{LabelSelector: OperatorSelector})
				if err != nil {
					return fmt.Errorf("listing the operator's Pods in %s: %w (--operator-namespace names another)", o.OperatorNamespace, err)
				}
				if len(pods.Items) == 0 {
					return fmt.Errorf("no operator Pod in namespace %s (--operator-namespace names another)", o.OperatorNamespace)
				}
				for _, p := range pods.Items {
					streams = append(streams, logStream{namespace: p.Namespace, pod: p.Name})
				}
			} else {
				cluster, err := getCluster(cmd.Context(), c, ns, args[0])
				if err != nil {
					return err
				}
				names := []string{}
				if len(args) == 2 {
					if err := checkInstanceOf(cmd.Context(), c, cluster, args[1]); err != nil {
						return err
					}
					names = append(names, args[1])
				} else {
					pods, err := instancePods(cmd.Context(), c, cluster)
					if err != nil {
						return err
					}
					for _, p := range pods {
						names = append(names, p.Name)
					}
				}
				for _, n := range names {
					streams = append(streams, logStream{namespace: ns, pod: n, container: mysqlContainer})
				}
			}
			return copyLogs(cmd.Context(), cs, streams, o, e.streams.Out)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Follow, "follow", "f", false, "keep printing new lines")
	f.Int64Var(&o.Tail, "tail", -1, "lines of each log to print from its end (-1: all)")
	f.BoolVar(&o.Operator, "operator", false, "the operator's logs instead of the Cluster's")
	f.StringVar(&o.OperatorNamespace, "operator-namespace", DefaultOperatorNamespace, "namespace of the operator")
	return cmd
}

// logStream is one container's log.
type logStream struct{ namespace, pod, container string }

// copyLogs copies every stream to out, line by line, each prefixed with its Pod, in parallel;
// lines never interleave within a line.
func copyLogs(ctx context.Context, cs kubernetes.Interface, streams []logStream, o LogsOptions, out io.Writer) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(streams))
	for i, s := range streams {
		wg.Go(func() {
			opts := &corev1.PodLogOptions{Container: s.container, Follow: o.Follow}
			if o.Tail >= 0 {
				opts.TailLines = &o.Tail
			}
			r, err := cs.CoreV1().Pods(s.namespace).GetLogs(s.pod, opts).Stream(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("the log of %s: %w", s.pod, err)
				return
			}
			defer r.Close()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				mu.Lock()
				fmt.Fprintf(out, "[%s] %s\n", s.pod, sc.Text())
				mu.Unlock()
			}
			if err := sc.Err(); err != nil && ctx.Err() == nil {
				errs[i] = fmt.Errorf("reading the log of %s: %w", s.pod, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
