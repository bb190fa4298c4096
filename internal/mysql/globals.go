package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// GlobalErrorKind sorts the errors of SET GLOBAL by what they mean for a parameter.
type GlobalErrorKind int

const (
	// GlobalErrorOther: anything else (the connection, a lock wait): try again later.
	GlobalErrorOther GlobalErrorKind = iota
	// GlobalReadOnly: the variable cannot be set at runtime (ER_INCORRECT_GLOBAL_LOCAL_VAR,
	// 1238): it takes effect at the next start.
	GlobalReadOnly
	// GlobalUnknown: no system variable has this name (ER_UNKNOWN_SYSTEM_VARIABLE, 1193): a
	// startup-only option, or a mistake.
	GlobalUnknown
	// GlobalWrongValue: the server refuses the value (ER_WRONG_VALUE_FOR_VAR 1231,
	// ER_WRONG_TYPE_FOR_VAR 1232, ER_WRONG_ARGUMENTS 1210, ER_UNKNOWN_STORAGE_ENGINE 1286) or the
	// variable is a session one (ER_LOCAL_VARIABLE 1228).
	GlobalWrongValue
)

// ClassifyGlobalError says what the error of a SET GLOBAL means.
func ClassifyGlobalError(err error) GlobalErrorKind {
	switch mysqlErrorNumber(err) {
	case 1238:
		return GlobalReadOnly
	case 1193:
		return GlobalUnknown
	case 1231, 1232, 1210, 1286, 1228:
		return GlobalWrongValue
	}
	if errors.Is(err, ErrGlobalName) {
		// A name SET GLOBAL cannot take (a component's dotted variable): a startup option to us.
		return GlobalUnknown
	}
	return GlobalErrorOther
}

var (
	globalName  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	sizeNumber  = regexp.MustCompile(`^([0-9]+)([KMGTPkmgtp])$`)
	keyword     = regexp.MustCompile(`^(?i:ON|OFF|TRUE|FALSE)$`)
)

// ErrGlobalName is returned for a name that is not a plain system variable name.
var ErrGlobalName = errors.New("not a system variable name")

// DefaultValue, given to SetGlobal, resets the variable to the server's compiled-in default.
const DefaultValue = "\x00DEFAULT"

// globalAssignment returns the SET GLOBAL statement for name = value, and its argument. An
// option file takes a number with a size suffix (128M), a bare word (ON) or a string; SET GLOBAL
// refuses a quoted number for a numeric variable (1232) and knows no suffixes, so a number is
// written bare, a size as its number of bytes, ON/OFF/TRUE/FALSE as keywords, anything else as a
// quoted string.
func globalAssignment(name, value string) (string, []any, error) {
	if !globalName.MatchString(name) {
		return "", nil, fmt.Errorf("%w: %q", ErrGlobalName, name)
	}
	head := "SET GLOBAL " + name + " = "
	switch {
	case value == DefaultValue:
		return head + "DEFAULT", nil, nil
	case plainNumber.MatchString(value):
		return head + value, nil, nil
	case keyword.MatchString(value):
		return head + strings.ToUpper(value), nil, nil
	}
	if m := sizeNumber.FindStringSubmatch(value); m != nil {
		n, _ := new(big.Int).SetString(m[1], 10)
		shift := uint(10 * (1 + strings.Index("KMGTP", strings.ToUpper(m[2]))))
		return head + n.Lsh(n, shift).String(), nil, nil
	}
	return head + "?", []any{value}, nil
}

func (o *operator) SetGlobal(ctx context.Context, name, value string) error {
	stmt, args, err := globalAssignment(name, value)
	if err != nil {
		return err
	}
	return o.exec(ctx, "setting "+name, stmt, args...)
}

func (o *operator) GlobalValue(ctx context.Context, name string) (string, error) {
	if !globalName.MatchString(name) {
		return "", fmt.Errorf("%w: %q", ErrGlobalName, name)
	}
	var v sql.NullString
	if err := o.db.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&v); err != nil {
		return "", fmt.Errorf("reading @@GLOBAL.%s on %s: %w", name, o.addr, err)
	}
	return v.String, nil
}
