package mysql

import (
	"context"
	"database/sql"
	"fmt"
)

// BinaryLog is one row of SHOW BINARY LOGS.
type BinaryLog struct {
	Name string
	Size int64
}

// ListBinaryLogs lists the binary logs of db, oldest first; the last is the open one. The
// statement takes the binary log index lock: ctx bounds a wait behind a large commit's flush.
func ListBinaryLogs(ctx context.Context, db *sql.DB) ([]BinaryLog, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("listing the binary logs: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("listing the binary logs: %w", err)
	}
	var out []BinaryLog
	for rows.Next() {
		var b BinaryLog
		dest := make([]any, len(cols)) // Log_name, File_size, Encrypted
		for i := range dest {
			dest[i] = new(sql.RawBytes)
		}
		dest[0], dest[1] = &b.Name, &b.Size
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("listing the binary logs: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the binary logs: %w", err)
	}
	return out, nil
}
