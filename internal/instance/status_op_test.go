package instance

import (
	"context"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// statusOp answers Status with st or err.
type statusOp struct {
	mysql.Operator
	st  *mysql.Status
	err error
}

func (s statusOp) Status(context.Context) (*mysql.Status, error) { return s.st, s.err }
