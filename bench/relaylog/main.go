// Command relaylog measures what sync_relay_log=1 costs a semi-synchronous primary: two real
// mysqld (a primary and one replica that acknowledges), clients committing one-row inserts for a
// fixed time, with the replica's sync_relay_log at MySQL's default (10000) and at 1, alternated
// over several rounds. It prints commits per second and commit latencies; it is not part of the
// tests. Run it as root (mysqld runs chrooted into the MySQL root filesystem) from the repository
// root:
//
//	go run ./bench/relaylog -seconds 10 -rounds 3 -clients 1,8
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

func main() {
	seconds := flag.Int("seconds", 10, "length of one measurement")
	rounds := flag.Int("rounds", 3, "measurements of each setting, alternated")
	clients := flag.String("clients", "1,8", "comma-separated numbers of concurrent committing clients")
	flag.Parse()
	var counts []int
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "bench/relaylog: -clients:", f)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if err := run(context.Background(), time.Duration(*seconds)*time.Second, *rounds, counts); err != nil {
		fmt.Fprintln(os.Stderr, "bench/relaylog:", err)
		os.Exit(1)
	}
}

var users = mysql.Users{
	Replication: mysql.Account{Name: "repl", Password: "repl-pw"},
	Backup:      mysql.Account{Name: "backup", Password: "backup-pw"},
}

// pair is the primary and its acknowledging replica.
type pair struct {
	primary, replica *mysqldtest.Server
	pdb, rdb         *sql.DB
}

func run(ctx context.Context, d time.Duration, rounds int, clients []int) error {
	// The owned durability settings of the primary: every commit is synced (binary log, InnoDB).
	args := []string{"--sync-binlog=1", "--innodb-flush-log-at-trx-commit=1", "--relay-log-recovery=OFF", "--skip-replica-start=ON"}
	ca, err := mysqldtest.NewCA()
	if err != nil {
		return err
	}
	var p pair
	if p.primary, err = mysqldtest.StartServer(ctx, mysqldtest.Config{CA: ca, ExtraArgs: args}); err != nil {
		return err
	}
	defer p.primary.Close()
	if p.replica, err = mysqldtest.StartServer(ctx, mysqldtest.Config{CA: ca, ExtraArgs: args}); err != nil {
		return err
	}
	defer p.replica.Close()
	if err := p.setUp(ctx); err != nil {
		return err
	}
	defer p.pdb.Close()
	defer p.rdb.Close()
	fmt.Printf("primary %s, replica %s (data under %s)\n", p.primary.Addr(), p.replica.Addr(), p.replica.Dir)
	fmt.Printf("%-8s %-15s %-6s %10s %10s %10s\n", "clients", "sync_relay_log", "round", "commits/s", "p50", "p99")
	for _, c := range clients {
		for r := 1; r <= rounds; r++ {
			for _, sync := range []int{10000, 1} {
				if _, err := p.rdb.ExecContext(ctx, fmt.Sprintf("SET GLOBAL sync_relay_log = %d", sync)); err != nil {
					return fmt.Errorf("setting sync_relay_log: %w", err)
				}
				res, err := measure(ctx, p.pdb, c, d)
				if err != nil {
					return err
				}
				fmt.Printf("%-8d %-15d %-6d %10.0f %10s %10s\n", c, sync, r, res.rate, res.p50, res.p99)
			}
		}
	}
	return nil
}

// setUp makes the replica follow the primary and acknowledge its commits.
func (p *pair) setUp(ctx context.Context) error {
	pop, err := mysql.NewFactory().New(p.primary.MySQLConfig("root", "", ""))
	if err != nil {
		return err
	}
	defer pop.Close()
	rop, err := mysql.NewFactory().New(p.replica.MySQLConfig("root", "", ""))
	if err != nil {
		return err
	}
	defer rop.Close()
	for _, op := range []mysql.Operator{pop, rop} {
		if err := op.InstallSemiSyncPlugins(ctx); err != nil {
			return err
		}
	}
	if err := pop.SetReadOnly(ctx, false); err != nil {
		return err
	}
	if err := pop.CreateUsers(ctx, users); err != nil {
		return err
	}
	r := p.replica
	if err := rop.ConfigureReplication(ctx, mysql.Source{Host: p.primary.Host, Port: p.primary.Port,
		User: users.Replication.Name, Password: users.Replication.Password, CAFile: r.InChroot(r.TLS.CAFile),
		CertFile: r.InChroot(r.TLS.ClientCertFile), KeyFile: r.InChroot(r.TLS.ClientKeyFile), VerifyServerCert: true}); err != nil {
		return err
	}
	if err := rop.StartReplication(ctx); err != nil {
		return err
	}
	if err := rop.ApplySemiSync(ctx, mysql.SemiSyncSettings{ReplicaEnabled: true, WaitForReplicaCount: 1, Timeout: time.Hour}); err != nil {
		return err
	}
	if err := pop.ApplySemiSync(ctx, mysql.SemiSyncSettings{SourceEnabled: true, WaitForReplicaCount: 1, Timeout: time.Hour}); err != nil {
		return err
	}
	if p.pdb, err = p.primary.OpenDB(ctx, "root", "", ""); err != nil {
		return err
	}
	if p.rdb, err = p.replica.OpenDB(ctx, "root", "", ""); err != nil {
		return err
	}
	p.pdb.SetMaxOpenConns(64)
	p.pdb.SetMaxIdleConns(64)
	for _, stmt := range []string{"CREATE DATABASE bench", "CREATE TABLE bench.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100))",
		"INSERT INTO bench.t (v) VALUES ('first')"} {
		if _, err := p.pdb.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	var name, active string
	if err := p.pdb.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_status'").Scan(&name, &active); err != nil {
		return fmt.Errorf("reading Rpl_semi_sync_source_status: %w", err)
	}
	if active != "ON" {
		return fmt.Errorf("semi-sync is not active on the primary (%s)", active)
	}
	return nil
}

type result struct {
	rate     float64
	p50, p99 time.Duration
}

// measure runs clients sessions committing one-row inserts for d.
func measure(ctx context.Context, db *sql.DB, clients int, d time.Duration) (result, error) {
	end := time.Now().Add(d)
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	begin := time.Now()
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(end) {
				t := time.Now()
				if _, err := db.ExecContext(ctx, "INSERT INTO bench.t (v) VALUES (REPEAT('x', 100))"); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if firstErr != nil {
		return result{}, fmt.Errorf("committing: %w", firstErr)
	}
	took := time.Since(begin)
	slices.Sort(lat)
	if len(lat) == 0 {
		return result{}, fmt.Errorf("no commit in %s", d)
	}
	return result{rate: float64(len(lat)) / took.Seconds(),
		p50: lat[len(lat)/2].Round(10 * time.Microsecond), p99: lat[len(lat)*99/100].Round(10 * time.Microsecond)}, nil
}
