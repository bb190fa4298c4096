// Command manager is the one binary of cloudnative-mysql: the operator (controller), the in-Pod
// instance manager (instance run), the backup and restore data paths and the bootstrap init step.
package main

import (
	"os"

	"github.com/spf13/cobra"

	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/bootstrap"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/controller"
	cmdinstance "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/instance"
	cmdrestore "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/restore"
	cmdverify "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/verify"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/version"
)

func main() {
	root := &cobra.Command{
		Use:           "manager",
		Short:         "cloudnative-mysql: operator, instance manager and backup data path",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(
		controller.NewCommand(),
		cmdinstance.NewCommand(),
		cmdbackup.NewCommand(),
		cmdrestore.NewCommand(),
		cmdverify.NewCommand(),
		bootstrap.NewCommand(),
	)
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
