package verify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
)

// ErrTableCheck: CHECK TABLE reported a table corrupt, or mysqld stopped while checking it.
var ErrTableCheck = errors.New("a table of the restored data failed CHECK TABLE")

// table is one base table of the restored data.
type table struct{ schema, name string }

func (t table) String() string { return quoteIdent(t.schema) + "." + quoteIdent(t.name) }

// tableChecks runs CHECK TABLE and counts rows on the restored server, within budget.
type tableChecks struct {
	budget time.Duration
	now    func() time.Time
	// seed picks the table the checks start at, so that when the budget runs out successive
	// verifications (of different backups) cover different tables.
	seed string
	log  *slog.Logger
	res  *backupjob.VerifyResult
}

// listTables lists every base table but those of the server's virtual schemas.
const listTables = `SELECT table_schema, table_name FROM information_schema.tables
WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('performance_schema', 'information_schema')
ORDER BY table_schema, table_name`

// run checks the tables of srv, starting at the seed's table and going round, until every table
// is checked or the budget is spent (at least one is checked).
func (c *tableChecks) run(ctx context.Context, srv *localmysqld.Server) error {
	begin := c.now()
	defer func() { c.res.CheckMillis = c.now().Sub(begin).Milliseconds() }()
	db := srv.DB()
	tables, err := readTables(ctx, db)
	if err != nil {
		return err
	}
	c.res.Tables = len(tables)
	order := rotate(tables, c.seed)
	for i, t := range order {
		if i > 0 && c.now().Sub(begin) >= c.budget {
			c.log.Info("the check budget is spent: the other tables are left for later verifications",
				"checked", i, "tables", len(tables), "budget", c.budget)
			break
		}
		rows, err := checkTable(ctx, db, t)
		if err != nil {
			return c.failed(srv, t, err)
		}
		c.res.TablesChecked++
		c.res.Rows += rows
		c.log.Info("table checked", "table", t.String(), "rows", rows)
	}
	return nil
}

// failed describes a failed check: when mysqld stopped meanwhile (InnoDB stops the server on a
// page it finds corrupt), with its error log's tail.
func (c *tableChecks) failed(srv *localmysqld.Server, t table, err error) error {
	if errors.Is(err, ErrTableCheck) {
		return err
	}
	select {
	case <-srv.Done():
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%w: checking %s: %w", ErrTableCheck, t, err)
	}
	return fmt.Errorf("%w: mysqld stopped while checking %s (%v): %w\n%s", ErrTableCheck, t, srv.ExitErr(), err,
		srv.ErrorLogTail(15))
}

func readTables(ctx context.Context, db *sql.DB) ([]table, error) {
	rows, err := db.QueryContext(ctx, listTables)
	if err != nil {
		return nil, fmt.Errorf("listing the tables of the restored data: %w", err)
	}
	defer rows.Close()
	var out []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.schema, &t.name); err != nil {
			return nil, fmt.Errorf("listing the tables of the restored data: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the tables of the restored data: %w", err)
	}
	return out, nil
}

// rotate returns tables starting at the one seed picks, going round.
func rotate(tables []table, seed string) []table {
	if len(tables) == 0 {
		return nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(seed))
	start := int(h.Sum32() % uint32(len(tables)))
	return append(append([]table(nil), tables[start:]...), tables[:start]...)
}

// checkTable runs CHECK TABLE on t and counts its rows. A table is corrupt when a row of the
// check says error, or its status is anything but OK (notes, such as an engine that cannot be
// checked, and warnings are not failures).
func checkTable(ctx context.Context, db *sql.DB, t table) (int64, error) {
	rows, err := db.QueryContext(ctx, "CHECK TABLE "+t.String())
	if err != nil {
		return 0, err
	}
	var problems []string
	for rows.Next() {
		var name, op, typ, text string
		if err := rows.Scan(&name, &op, &typ, &text); err != nil {
			rows.Close()
			return 0, err
		}
		switch strings.ToLower(typ) {
		case "error":
			problems = append(problems, text)
		case "status":
			if text != "OK" && text != "Table is already up to date" {
				problems = append(problems, text)
			}
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, err
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("%w: CHECK TABLE %s: %s", ErrTableCheck, t, strings.Join(problems, "; "))
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.String()).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the rows of %s: %w", t, err)
	}
	return n, nil
}

// quoteIdent quotes a MySQL identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
