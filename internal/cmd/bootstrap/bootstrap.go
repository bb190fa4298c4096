package bootstrap

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// NewCommand returns `manager bootstrap DEST`.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "bootstrap DEST",
		Short: "Copy this binary to DEST (init container of instance Pods)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("locating own binary: %w", err)
			}
			if err := CopyExecutable(self, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "copied %s to %s\n", self, args[0])
			return nil
		},
	}
}

// CopyExecutable copies src to dest with mode 0755. It writes a temporary file beside dest and
// renames it, so a container that starts concurrently never sees a half-written binary.
func CopyExecutable(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening %s: %w", src, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".manager-*")
	if err != nil {
		return fmt.Errorf("creating a file beside %s: %w", dest, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return fmt.Errorf("making %s executable: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("installing %s: %w", dest, err)
	}
	return nil
}
