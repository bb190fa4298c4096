package stubs

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// ErrNotAvailable is returned by every subcommand of this package.
var ErrNotAvailable = errors.New("not available in this release yet")

func notAvailable(name string) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		return fmt.Errorf("manager %s: %w", name, ErrNotAvailable)
	}
}

// NewInstanceCommand returns `manager instance` with its `run` subcommand, PID 1 of instance Pods.
func NewInstanceCommand() *cobra.Command {
	instance := &cobra.Command{Use: "instance", Short: "In-Pod instance manager"}
	instance.AddCommand(&cobra.Command{
		Use:   "run",
		Short: "Run mysqld under the instance manager (PID 1 of an instance Pod)",
		Args:  cobra.NoArgs,
		RunE:  notAvailable("instance run"),
	})
	return instance
}
