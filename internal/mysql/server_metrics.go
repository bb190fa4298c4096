package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// ServerMetrics are the server figures the instance manager exports beside its own: counters
// and gauges of SHOW GLOBAL STATUS, max_connections and the size of the binary logs.
type ServerMetrics struct {
	// Status holds the GlobalStatusNames variables the server reported, by name.
	Status         map[string]int64
	MaxConnections int64
	// BinlogBytes is the total size of the binary logs (SHOW BINARY LOGS); 0 with log_bin off.
	BinlogBytes int64
}

// GlobalStatusNames are the SHOW GLOBAL STATUS variables ServerMetrics reads.
var GlobalStatusNames = []string{
	"Threads_connected", "Threads_running", "Connections", "Aborted_connects", "Queries", "Slow_queries",
	"Innodb_buffer_pool_bytes_data", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads",
	"Innodb_row_lock_waits", "Innodb_data_written", "Binlog_cache_disk_use", "Uptime",
}

// ServerMetrics reads the figures of ServerMetrics in a few short statements: the status
// variables, two system variables and SHOW BINARY LOGS. The last takes the binary log index lock,
// as the archiver's pass does every second on a primary, so a scrape can wait behind the flush of
// a very large commit; the caller's context (instancemetrics.GatherTimeout) bounds that wait.
func (o *operator) ServerMetrics(ctx context.Context) (*ServerMetrics, error) {
	out := &ServerMetrics{Status: map[string]int64{}}
	// The names are this package's constants; SHOW STATUS works with performance_schema off.
	rows, err := o.db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(GlobalStatusNames, "','")+"')")
	if err != nil {
		return nil, fmt.Errorf("reading the global status of %s: %w", o.addr, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("reading the global status of %s: %w", o.addr, err)
		}
		if v, err := strconv.ParseInt(value, 10, 64); err == nil {
			out.Status[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the global status of %s: %w", o.addr, err)
	}
	if err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL.max_connections").Scan(&out.MaxConnections); err != nil {
		return nil, fmt.Errorf("reading max_connections of %s: %w", o.addr, err)
	}
	if out.BinlogBytes, err = o.binlogBytes(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// binlogBytes sums the sizes SHOW BINARY LOGS lists; 0 when binary logging is off.
func (o *operator) binlogBytes(ctx context.Context) (int64, error) {
	var on bool
	if err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL.log_bin").Scan(&on); err != nil {
		return 0, fmt.Errorf("reading log_bin of %s: %w", o.addr, err)
	}
	if !on {
		return 0, nil
	}
	logs, err := ListBinaryLogs(ctx, o.db)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", o.addr, err)
	}
	var total int64
	for _, l := range logs {
		total += l.Size
	}
	return total, nil
}
