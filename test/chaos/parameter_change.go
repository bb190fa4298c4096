package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The parameter changes: a dynamic variable (max_connections), which every instance takes at
// once by SET GLOBAL, and one mysqld takes only at its start (table_open_cache_instances), which
// restarts the instances in the rolling update's order.
const (
	ParameterDynamic Kind = "parameter-dynamic"
	ParameterRestart Kind = "parameter-restart"
)

// parameterOf is the variable a parameter change of kind k edits, and its two values.
func parameterOf(k Kind) (key string, a, b int) {
	if k == ParameterRestart {
		return "table_open_cache_instances", 8, 9
	}
	return "max_connections", 300, 301
}

// injectParameterChange edits spec.mysql.parameters, as a person would, and waits until every
// instance's mysqld runs with the new value and the Cluster reports nothing pending or refused.
func (e *Env) injectParameterChange(ctx context.Context, t Target, f *Fault, k Kind) error {
	watch, err := e.watchShutdowns(ctx, t)
	if err != nil {
		return err
	}
	defer watch.stop()
	key, a, b := parameterOf(k)
	var value string
	c, err := e.EditCluster(ctx, t, func(c *mysqlv1.Cluster) {
		value = strconv.Itoa(a)
		if c.Spec.MySQL.Parameters[key] == value {
			value = strconv.Itoa(b)
		}
		if c.Spec.MySQL.Parameters == nil {
			c.Spec.MySQL.Parameters = map[string]string{}
		}
		c.Spec.MySQL.Parameters[key] = value
	})
	if err != nil {
		return fmt.Errorf("changing %s of %s: %w", key, t.Name, err)
	}
	f.At = time.Now()
	f.Detail = key + " = " + value
	if err := pollUntil(ctx, RolloutTimeout, func() (bool, string, error) {
		return e.parameterApplied(ctx, t, c.Generation, key, value)
	}); err != nil {
		return fmt.Errorf("%s = %s on every instance: %w", key, value, err)
	}
	now := time.Now()
	f.Healed = &now
	f.Detail += fmt.Sprintf("; every instance runs it after %s", now.Sub(f.At).Round(100*time.Millisecond))
	return f.recordShutdowns(e.finishShutdownWatch(ctx, t, watch))
}

// parameterApplied: the Cluster, its status describing generation, is settled with nothing
// pending or refused, and every instance's mysqld reports key = value.
func (e *Env) parameterApplied(ctx context.Context, t Target, generation int64, key, value string) (bool, string, error) {
	c, err := e.Cluster(ctx, t)
	if err != nil {
		return false, "", err
	}
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return false, "", err
	}
	if ok, why := settledAt(c, pods, generation); !ok {
		return false, why, nil
	}
	if c.Status.Parameters != nil {
		return false, fmt.Sprintf("status.parameters %+v", c.Status.Parameters), nil
	}
	for _, pod := range pods {
		out, err := e.RootSQL(ctx, t.Namespace, pod.Name, "SELECT @@GLOBAL."+key)
		if err != nil {
			return false, "", err
		}
		if got := strings.TrimSpace(out); got != value {
			return false, fmt.Sprintf("%s runs %s = %s", pod.Name, key, got), nil
		}
	}
	return true, "", nil
}
