package v1alpha1

import "regexp"

// retentionPattern is the schema's pattern for spec.backup.retentionPolicy (see the marker on
// BackupConfiguration.RetentionPolicy); the fuzz test keeps the parser and the schema in step.
var retentionPattern = regexp.MustCompile(`^[1-9][0-9]{0,2}[dwm]$`)
