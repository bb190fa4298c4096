package pitr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// The image's client programs, as mysqld sees them.
const (
	mysqlbinlogProgram = "/usr/bin/mysqlbinlog"
	mysqlProgram       = "/usr/bin/mysql"
	// maxPacket is the largest statement mysqlbinlog may print (a BINLOG statement carries a whole
	// row event, base64-encoded), for mysql and the replay server: the most MySQL allows.
	maxPacket = "1073741824"
)

// pipeBinlogs runs `mysqlbinlog --include-gtids=<set> files... | mysql` against the server's
// socket. Both read no option file; mysql stops at the first error; either one failing fails the
// replay, with the tail of mysqlbinlog's standard error, or the error codes of mysql's
// (loadErrorCodes: its messages may quote row data).
func pipeBinlogs(ctx context.Context, c localmysqld.Command, socket string, files []string, set gtid.Set) error {
	decodeArgs := []string{"--no-defaults", "--include-gtids=" + set.String()}
	for _, f := range files {
		decodeArgs = append(decodeArgs, c.Path(f))
	}
	decode := command(c.Tool(mysqlbinlogProgram, decodeArgs...))
	load := command(c.Tool(mysqlProgram, "--no-defaults", "--binary-mode", "--max-allowed-packet="+maxPacket,
		"--user=root", "--socket="+c.Path(socket)))
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating a pipe: %w", err)
	}
	var decodeErr, loadErr bytes.Buffer
	decode.Stdout, decode.Stderr = w, &decodeErr
	load.Stdin, load.Stdout, load.Stderr = r, &loadErr, &loadErr
	loader, err := proc.StartTied(load)
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("starting mysql: %w", err)
	}
	decoder, err := proc.StartTied(decode)
	w.Close()
	if err != nil {
		loader.Kill()
		return fmt.Errorf("starting mysqlbinlog: %w", err)
	}
	select {
	case <-ctx.Done():
		decoder.Kill()
		loader.Kill()
		return fmt.Errorf("replaying binlogs: %w", context.Cause(ctx))
	case <-loader.Done():
	}
	if loader.Err() != nil {
		decoder.Kill()
	}
	loadErrs := bytes.NewBufferString(loadErrorCodes(loadErr.Bytes()))
	return errors.Join(
		exitError("mysqlbinlog", decoder.Wait(), &decodeErr),
		exitError("mysql", loader.Wait(), loadErrs))
}

// mysqlError matches the line the mysql client prints for a failed statement, up to the message.
var mysqlError = regexp.MustCompile(`(?m)^(ERROR \d+ \([0-9A-Z]{5}\)(?: at line \d+)?)`)

// loadErrorCodes keeps, of what the mysql client printed, the code, SQLSTATE and line of each
// error, never its message: a replayed statement's error quotes the row it failed on (a duplicate
// key's value, say), and the replay's error ends up in the Cluster's conditions and Events, which
// anyone who can read the Cluster sees. The code is enough to look the error up.
func loadErrorCodes(stderr []byte) string {
	found := mysqlError.FindAllSubmatch(stderr, -1)
	if len(found) == 0 {
		if len(bytes.TrimSpace(stderr)) == 0 {
			return ""
		}
		return "(no MySQL error code in its output, which is not reported: it may quote row data)"
	}
	codes := make([]string, 0, len(found))
	for _, m := range found {
		codes = append(codes, string(m[1])+" (message withheld: it may quote row data)")
	}
	return strings.Join(codes, "\n")
}

func command(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TZ=UTC"}
	return cmd
}

func exitError(name string, err error, stderr *bytes.Buffer) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w: %s", name, err, localmysqld.Tail(stderr.Bytes(), 10))
}
