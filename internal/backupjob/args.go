package backupjob

import (
	"github.com/spf13/pflag"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Args are the flags a backup Job passes to `manager backup`. Every secret is a file path (a
// mounted Secret), never a value.
type Args struct {
	Cluster, BackupName, BackupID string
	// Namespace is the Cluster's, recorded in metadata.json so that a Cluster of the same name in
	// another namespace writing to the same location never takes the backup for its own.
	Namespace string
	// ClusterUID is the Cluster incarnation's: the backup is written only where the location's
	// marker names it, and recorded in metadata.json.
	ClusterUID                string
	Method                    string
	TargetHost                string
	TargetPort                int
	User, PasswordFile        string
	CAFile, CertFile, KeyFile string
	ScratchDir                string
	// TerminationLog is where the Result is written.
	TerminationLog string
	Store          Store
}

// Store locates the object store; `manager restore` takes the same flags.
type Store struct {
	Bucket, Path, Endpoint, Region string
	ForcePathStyle                 bool
	AccessKeyIDFile                string
	SecretAccessKeyFile            string
	SessionTokenFile               string
	EndpointCAFile                 string
}

// Bind declares the flags on fs, into a, with the command's defaults. It is the one definition
// of the flags: Flags renders through it too.
func (a *Args) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&a.Cluster, "cluster", "", "Cluster name")
	fs.StringVar(&a.Namespace, "namespace", "", "the Cluster's namespace, recorded in metadata.json")
	fs.StringVar(&a.ClusterUID, "cluster-uid", "", "the Cluster's metadata.uid: the location's marker must name it")
	fs.StringVar(&a.BackupName, "backup-name", "", "Backup name")
	fs.StringVar(&a.BackupID, "backup-id", "", "backup id: the backup's directory in the object store")
	fs.StringVar(&a.Method, "method", string(v1.BackupMethodClone), "clone or xtrabackup")
	fs.StringVar(&a.TargetHost, "target-host", "", "the instance to back up")
	fs.IntVar(&a.TargetPort, "target-port", 3306, "its MySQL port")
	fs.StringVar(&a.User, "user", "", "backup account (BACKUP_ADMIN)")
	fs.StringVar(&a.PasswordFile, "password-file", "", "file holding the backup account's password")
	fs.StringVar(&a.CAFile, "tls-ca-file", "", "CA that signs the instance certificates")
	fs.StringVar(&a.CertFile, "tls-cert-file", "", "client certificate presented to the instance")
	fs.StringVar(&a.KeyFile, "tls-key-file", "", "its key")
	fs.StringVar(&a.ScratchDir, "scratch-dir", "/scratch", "empty directory for the recipient and the copy")
	fs.StringVar(&a.TerminationLog, "termination-log", DefaultTerminationLog, "where the result is written")
	a.Store.Bind(fs)
}

// Bind declares the object store flags on fs, into s.
func (s *Store) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&s.Bucket, "bucket", "", "object store bucket")
	fs.StringVar(&s.Path, "path", "", "key prefix inside the bucket")
	fs.StringVar(&s.Endpoint, "endpoint", "", "S3 endpoint URL (empty: AWS S3)")
	fs.StringVar(&s.Region, "region", "", "bucket region")
	fs.BoolVar(&s.ForcePathStyle, "force-path-style", false, "address the bucket in the URL path")
	fs.StringVar(&s.AccessKeyIDFile, "access-key-id-file", "", "file holding the access key id")
	fs.StringVar(&s.SecretAccessKeyFile, "secret-access-key-file", "", "file holding the secret access key")
	fs.StringVar(&s.SessionTokenFile, "session-token-file", "", "file holding a session token (optional)")
	fs.StringVar(&s.EndpointCAFile, "endpoint-ca-file", "", "PEM bundle signing the endpoint's certificate (optional)")
}

// Flags renders a as the arguments of the Job's container, `--name=value` in the order Bind
// declares them. A field left at its zero value is left out, so the command's default applies.
func (a Args) Flags() []string { return flagsOf(a, (*Args).Bind) }

// flagsOf renders v through bind, the one definition of its flags: bind points each flag at a
// field of a zero value, set to its default, which then takes v's values.
func flagsOf[T any](v T, bind func(*T, *pflag.FlagSet)) []string {
	var bound T
	fs := pflag.NewFlagSet("job", pflag.ContinueOnError)
	fs.SortFlags = false
	bind(&bound, fs)
	bound = v
	return render(fs)
}

// render lists fs's flags that are not at their zero value as `--name=value`, in declaration
// order (a repeatable flag once per value).
func render(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		if v := f.Value.String(); !isZero(f.Value.Type(), v) {
			out = append(out, "--"+f.Name+"="+v)
		}
	})
	return out
}

func isZero(typ, v string) bool {
	switch typ {
	case "bool":
		return v == "false"
	case "int":
		return v == "0"
	case "duration":
		return v == "0s"
	}
	return v == ""
}
