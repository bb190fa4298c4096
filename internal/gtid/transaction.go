package gtid

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/google/uuid"
)

// GTID names one transaction: its source's UUID, its tag (MySQL 8.3+, "" for none) and its
// transaction number.
type GTID struct {
	SID uuid.UUID
	Tag string
	GNO int64
}

// String prints the transaction as MySQL does: uuid[:tag]:gno.
func (g GTID) String() string {
	if g.Tag == "" {
		return fmt.Sprintf("%s:%d", g.SID, g.GNO)
	}
	return fmt.Sprintf("%s:%s:%d", g.SID, strings.ToLower(g.Tag), g.GNO)
}

// Has reports whether the transaction g is in s.
func (s Set) Has(g GTID) bool {
	for _, iv := range s.m[g.SID][mysql.NewTag(g.Tag)] {
		if g.GNO >= iv.Start && g.GNO < iv.Stop {
			return true
		}
	}
	return false
}

// Builder accumulates transactions into a Set, cheaply when they come in order (as a binary
// log holds them). The zero value is ready to use.
type Builder struct {
	m mysql.MysqlGTIDSet
}

// Add adds one transaction.
func (b *Builder) Add(g GTID) {
	if b.m == nil {
		b.m = mysql.NewMysqlGTIDSet()
	}
	b.m.AddGTIDWithTag(g.SID, mysql.NewTag(g.Tag), g.GNO)
}

// Set returns what was added so far; the Builder may go on.
func (b *Builder) Set() Set {
	if len(b.m) == 0 {
		return Set{}
	}
	return Set{m: *(b.m.Clone().(*mysql.MysqlGTIDSet))}
}

// Intersect returns the transactions in both s and o.
func (s Set) Intersect(o Set) Set { return s.Subtract(s.Subtract(o)) }
