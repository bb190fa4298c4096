package backup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// binlogPosRE matches xtrabackup_info's binlog_pos value:
// filename 'binlog.000003', position '237', GTID of the last change 'uuid:1-5'.
var binlogPosRE = regexp.MustCompile(`^filename '([^']*)', position '(\d+)'(?:, GTID of the last change '([^']*)')?`)

// ParseXtrabackupInfo reads the coordinates out of the xtrabackup_info file --extra-lsndir
// leaves behind.
func ParseXtrabackupInfo(data []byte) (Coordinates, error) {
	var c Coordinates
	var sawPos bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		// A long GTID set continues on the next lines until its quote closes.
		for strings.Count(value, "'")%2 == 1 && sc.Scan() {
			value += strings.TrimSpace(sc.Text())
		}
		switch key {
		case "server_version":
			c.ServerVersion = value
		case "binlog_pos":
			m := binlogPosRE.FindStringSubmatch(value)
			if m == nil || strings.Contains(value, "GTID") && m[3] == "" {
				return Coordinates{}, fmt.Errorf("xtrabackup_info: binlog_pos %q not understood", value)
			}
			pos, err := strconv.ParseInt(m[2], 10, 64)
			if err != nil {
				return Coordinates{}, fmt.Errorf("xtrabackup_info: binlog position: %w", err)
			}
			c.BinlogFile, c.BinlogPosition, c.GTIDExecuted = m[1], pos, normalizeGTIDSet(m[3])
			sawPos = true
		}
	}
	if err := sc.Err(); err != nil {
		return Coordinates{}, fmt.Errorf("xtrabackup_info: %w", err)
	}
	if !sawPos || c.ServerVersion == "" {
		return Coordinates{}, errors.New("xtrabackup_info: no binlog_pos or server_version")
	}
	return c, nil
}
