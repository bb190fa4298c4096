package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

func main() { os.Exit(run()) }

// run returns the exit status, so that the namespace is deleted on every path.
func run() int {
	var (
		faults     = flag.Int("faults", 10, "faults to inject, one after the other")
		kinds      = flag.String("kinds", kindList(defaultKinds()), "fault kinds, used in turn (operator-upgrade needs bash hack/localcluster.sh next-operator first)")
		durability = flag.String("durability", "required", "the Cluster's semi-sync dataDurability: required or preferred")
		timeoutMs  = flag.Int64("semisync-timeout-millis", 0, "semi-sync timeoutMillis; 0: the CRD's default")
		hold       = flag.Duration("hold", 45*time.Second, "how long a network cut lasts: longer than the Lease TTL (15 s) and the failover after it")
		rate       = flag.Duration("write-interval", 20*time.Millisecond, "time between two inserts")
		namespace  = flag.String("namespace", "", "namespace of the Cluster (default failover-<durability>-<time>)")
		name       = flag.String("cluster", "db", "name of the Cluster")
		image      = flag.String("image", "cloudnative-mysql/mysql:9.7", "MySQL image of the Cluster")
		install    = flag.Bool("install", true, "install the operator from config/default first")
		keep       = flag.Bool("keep", false, "keep the namespace at the end")
		out        = flag.String("out", "", "write the report as JSON to this file")
		ready      = flag.Duration("ready-timeout", 5*time.Minute, "how long the Cluster may take to be Ready again after a fault before the run stops")
		recover    = flag.Bool("recover-diverged", true, "when a fault leaves an instance diverged, check what it alone holds and recover it (PVC and Pod deleted) instead of stopping")
	)
	flag.Parse()
	ks, err := chaos.ParseKinds(*kinds)
	if err != nil {
		log.Print(err)
		return 2
	}
	d := mysqlv1.DataDurability(*durability)
	if d != mysqlv1.DataDurabilityRequired && d != mysqlv1.DataDurabilityPreferred {
		log.Printf("-durability %q: want required or preferred", *durability)
		return 2
	}
	if *namespace == "" {
		*namespace = fmt.Sprintf("failover-%s-%s", d, time.Now().UTC().Format("150405"))
	}
	env, err := chaos.LocalEnv("", "", "")
	if err != nil {
		log.Print(err)
		return 1
	}
	env.Logf = log.Printf
	ctx := context.Background()
	if *install {
		if err := installOperator(env); err != nil {
			log.Print(err)
			return 1
		}
	}
	t := chaos.Target{Namespace: *namespace, Name: *name}
	if err := env.CreateCluster(ctx, chaos.ClusterSpec(t, *image, d, *timeoutMs)); err != nil {
		log.Print(err)
		return 1
	}
	log.Printf("cluster %s/%s created (dataDurability %s, semi-sync timeout %d ms); %d faults of %v",
		t.Namespace, t.Name, d, *timeoutMs, *faults, ks)
	if !*keep {
		defer func() {
			_ = env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.Namespace}})
		}()
	}
	rep, runErr := chaos.Run(ctx, env, chaos.Config{Target: t, Faults: *faults, Kinds: ks, Hold: *hold, WriteInterval: *rate,
		ReadyTimeout: *ready, RecoverDiverged: *recover})
	rep.Print(os.Stdout)
	rep.PrintTargets(os.Stdout)
	if *out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			log.Print(err)
		}
	}
	if runErr != nil {
		log.Printf("run stopped: %v", runErr)
		return 1
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// defaultKinds are every kind but the operator upgrade, whose image is built on demand.
func defaultKinds() []chaos.Kind {
	var out []chaos.Kind
	for _, k := range chaos.Kinds {
		if k != chaos.OperatorUpgrade {
			out = append(out, k)
		}
	}
	return out
}

func kindList(ks []chaos.Kind) string {
	var s []string
	for _, k := range ks {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

// installOperator applies config/default of the repository in the working directory and waits for
// the operator's rollout, as the e2e tests do.
func installOperator(env *chaos.Env) error {
	dir, err := filepath.Abs("config/default")
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"apply", "--server-side", "--force-conflicts", "-k", dir},
		{"-n", "cloudnative-mysql-system", "rollout", "status", "deploy/cloudnative-mysql-manager", "--timeout=180s"},
	} {
		cmd := exec.Command(env.Kubectl, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
