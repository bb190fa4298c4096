package gtid

import "github.com/go-mysql-org/go-mysql/mysql"

// Union returns the transactions in s or in o (MySQL's GTID set union). Neither is modified.
func Union(sets ...Set) Set {
	out := mysql.NewMysqlGTIDSet()
	for _, s := range sets {
		for sid, tags := range s.m {
			if out[sid] == nil {
				out[sid] = map[mysql.Tag]mysql.IntervalSlice{}
			}
			for tag, intervals := range tags {
				merged := append(append(mysql.IntervalSlice{}, out[sid][tag]...), intervals...)
				out[sid][tag] = merged.Normalize()
			}
		}
	}
	if len(out) == 0 {
		return Set{}
	}
	return Set{m: out}
}
