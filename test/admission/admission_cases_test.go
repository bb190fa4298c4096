package admission_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestScheduledBackupAdmission(t *testing.T) {
	withSpec := func(extra string) string { return validScheduledBackup + extra }
	runAdmissionCases(t, []admissionCase{
		{name: "six-field schedule is accepted", manifest: validScheduledBackup},
		{name: "five-field Unix cron is rejected: seconds field required",
			manifest: strings.Replace(validScheduledBackup, `"0 0 2 * * *"`, `"0 2 * * *"`, 1),
			wantErr:  "the leading seconds field is required"},
		{name: "seven fields are rejected",
			manifest: strings.Replace(validScheduledBackup, `"0 0 2 * * *"`, `"0 0 2 * * * 2030"`, 1),
			wantErr:  "schedule must have six fields"},
		{name: "unknown backupOwnerReference is rejected",
			manifest: withSpec("  backupOwnerReference: owner\n"),
			wantErr:  `spec.backupOwnerReference: Unsupported value: "owner"`},
		{name: "unknown method is rejected", manifest: withSpec("  method: rsync\n"),
			wantErr: `spec.method: Unsupported value: "rsync"`},
		{name: "unknown target is rejected", manifest: withSpec("  target: standby\n"),
			wantErr: `spec.target: Unsupported value: "standby"`},
		{name: "missing cluster is rejected",
			manifest: "apiVersion: mysql.cloudnative-mysql.io/v1alpha1\nkind: ScheduledBackup\nmetadata: {name: %NAME%}\nspec: {schedule: \"0 0 2 * * *\"}\n",
			wantErr:  "spec.cluster: Required value"},
		{name: "a 48-character name is accepted",
			manifest: strings.Replace(validScheduledBackup, "%NAME%", strings.Repeat("s", 48), 1)},
		{name: "a 49-character name is rejected: child names would be too long",
			manifest: strings.Replace(validScheduledBackup, "%NAME%", strings.Repeat("s", 49), 1),
			wantErr:  "a ScheduledBackup name is at most 48 characters"},
		{name: "negative history limit is rejected", manifest: withSpec("  failedBackupsHistoryLimit: -1\n"),
			wantErr: "spec.failedBackupsHistoryLimit: Invalid value: -1"},
	})
}

func TestBackupAdmission(t *testing.T) {
	runAdmissionCases(t, []admissionCase{
		{name: "minimal Backup is accepted", manifest: validBackup},
		{name: "a 64-character name is rejected",
			manifest: strings.Replace(validBackup, "%NAME%", strings.Repeat("b", 64), 1),
			wantErr:  "a Backup name is at most 63 characters"},
		{name: "the name binlogs is rejected: it is the binlog archive's directory",
			manifest: strings.Replace(validBackup, "%NAME%", "binlogs", 1),
			wantErr:  "a Backup cannot be named binlogs"},
		{name: "unknown deletionPolicy is rejected", manifest: validBackup + "  deletionPolicy: purge\n",
			wantErr: `spec.deletionPolicy: Unsupported value: "purge"`},
		{name: "method cannot change after creation", manifest: validBackup,
			update:        func(u *unstructured.Unstructured) { setField(u, "xtrabackup", "spec", "method") },
			wantUpdateErr: "method is immutable"},
		{name: "cluster cannot change after creation", manifest: validBackup,
			update:        func(u *unstructured.Unstructured) { setField(u, "other", "spec", "cluster", "name") },
			wantUpdateErr: "cluster is immutable"},
		{name: "deletionPolicy may change after creation", manifest: validBackup,
			update: func(u *unstructured.Unstructured) { setField(u, "delete", "spec", "deletionPolicy") }},
	})
}

func TestClusterAdmission(t *testing.T) {
	withSpec := func(extra string) string { return validCluster + extra }
	withBackup := func(extra string) string { return validCluster + "  backup:\n" + extra }
	services := func(extra string) string { return validCluster + "  managed:\n    services:\n" + extra }
	runAdmissionCases(t, []admissionCase{
		{name: "minimal Cluster is accepted", manifest: validCluster},
		{name: "zero instances are rejected", manifest: strings.Replace(validCluster, "instances: 3", "instances: 0", 1),
			wantErr: "spec.instances: Invalid value: 0"},
		{name: "minSyncReplicas above maxSyncReplicas is rejected",
			manifest: withSpec("  minSyncReplicas: 2\n  maxSyncReplicas: 1\n"),
			wantErr:  "minSyncReplicas must not be greater than maxSyncReplicas"},
		{name: "maxSyncReplicas equal to instances is rejected",
			manifest: withSpec("  minSyncReplicas: 1\n  maxSyncReplicas: 3\n"),
			wantErr:  "maxSyncReplicas must be lower than instances"},
		{name: "semi-sync with minSyncReplicas 0 is rejected",
			manifest: withSpec("  mysql:\n    semiSync: {enabled: true}\n"),
			wantErr:  "semi-sync needs minSyncReplicas >= 1"},
		{name: "semi-sync as in the seed is accepted",
			manifest: withSpec("  minSyncReplicas: 1\n  maxSyncReplicas: 1\n  mysql:\n    semiSync: {enabled: true, timeoutMillis: 1000}\n")},
		{name: "unknown dataDurability is rejected",
			manifest: withSpec("  minSyncReplicas: 1\n  maxSyncReplicas: 1\n  mysql:\n    semiSync: {enabled: true, dataDurability: maybe}\n"),
			wantErr:  `Unsupported value: "maybe"`},
		{name: "a 30d retention window with an object store is accepted", manifest: withBackup(objectStore + "    retentionPolicy: 30d\n")},
		{name: "weeks and months windows are accepted", manifest: withBackup(objectStore + "    retentionPolicy: 12m\n")},
		{name: "a zero retention window is rejected", manifest: withBackup(objectStore + "    retentionPolicy: 0d\n"),
			wantErr: "spec.backup.retentionPolicy in body should match"},
		{name: "an unknown retention unit is rejected", manifest: withBackup(objectStore + "    retentionPolicy: 1y\n"),
			wantErr: "spec.backup.retentionPolicy in body should match"},
		{name: "a retention window without a unit is rejected", manifest: withBackup(objectStore + "    retentionPolicy: \"30\"\n"),
			wantErr: "spec.backup.retentionPolicy in body should match"},
		{name: "retention without an object store is rejected", manifest: withBackup("    retentionPolicy: 30d\n"),
			wantErr: "a retention policy requires an objectStore"},
		{name: "count retention without an object store is rejected", manifest: withBackup("    retentionCount: 3\n"),
			wantErr: "a retention policy requires an objectStore"},
		{name: "retentionCount 0 is rejected", manifest: withBackup(objectStore + "    retentionCount: 0\n"),
			wantErr: "spec.backup.retentionCount: Invalid value: 0"},
		{name: "retentionSize 0 is rejected", manifest: withBackup(objectStore + "    retentionSize: \"0\"\n"),
			wantErr: "retentionSize must be greater than zero"},
		{name: "an archive timeout of 30s is accepted", manifest: withBackup(objectStore + "    archiveTimeout: 30s\n")},
		{name: "a verification with a schedule is accepted",
			manifest: withBackup(objectStore + "    verification:\n      schedule: \"0 30 4 * * *\"\n      storage: {size: 20Gi}\n")},
		{name: "a verification every backup is accepted", manifest: withBackup(objectStore + "    verification: {everyBackups: 1}\n")},
		{name: "a verification with neither a schedule nor everyBackups is rejected",
			manifest: withBackup(objectStore + "    verification: {timeout: 1h}\n"),
			wantErr:  "verification needs a schedule, everyBackups, or both"},
		{name: "a five-field verification schedule is rejected",
			manifest: withBackup(objectStore + "    verification: {schedule: \"30 4 * * *\"}\n"),
			wantErr:  "schedule must have six fields"},
		{name: "a verification timeout under a minute is rejected",
			manifest: withBackup(objectStore + "    verification: {everyBackups: 1, timeout: 30s}\n"),
			wantErr:  "timeout must be at least 1m"},
		{name: "everyBackups 0 is rejected", manifest: withBackup(objectStore + "    verification: {everyBackups: 0}\n"),
			wantErr: "spec.backup.verification.everyBackups"},
		{name: "an archive timeout of 0s is rejected", manifest: withBackup(objectStore + "    archiveTimeout: 0s\n"),
			wantErr: "archiveTimeout must be between 1s and 10m"},
		{name: "an archive timeout over 10m is rejected", manifest: withBackup(objectStore + "    archiveTimeout: 11m\n"),
			wantErr: "archiveTimeout must be between 1s and 10m"},
		{name: "a sub-second archive timeout is rejected", manifest: withBackup(objectStore + "    archiveTimeout: 500ms\n"),
			wantErr: "archiveTimeout must be a whole number of seconds"},
		{name: "count and size retention are accepted", manifest: withBackup(objectStore + "    retentionCount: 7\n    retentionSize: 500Gi\n")},
		{name: "an object store endpoint without a scheme is rejected",
			manifest: withBackup(strings.Replace(objectStore, "http://127.0.0.1:9000", "s3.local", 1)),
			wantErr:  "spec.backup.objectStore.endpoint in body should match"},
		{name: "the rw Service cannot be disabled", manifest: services("      disabledDefaultServices: [rw]\n"),
			wantErr: "the rw Service cannot be disabled"},
		{name: "ro and r Services can be disabled", manifest: services("      disabledDefaultServices: [ro, r]\n")},
		{name: "an additional Service named ro is rejected",
			manifest: services("      additional:\n      - {name: ro, selectorType: ro}\n"),
			wantErr:  "additional Service names must not be rw, ro or r"},
		{name: "duplicate additional Service names are rejected",
			manifest: services("      additional:\n      - {name: lb, selectorType: rw}\n      - {name: lb, selectorType: ro}\n"),
			wantErr:  "Duplicate value"},
		{name: "an unknown selectorType is rejected",
			manifest: services("      additional:\n      - {name: lb, selectorType: primary}\n"),
			wantErr:  `Unsupported value: "primary"`},
		{name: "an unknown updateStrategy is rejected",
			manifest: services("      additional:\n      - {name: lb, selectorType: rw, updateStrategy: merge}\n"),
			wantErr:  `Unsupported value: "merge"`},
		{name: "additional Services as in the seed are accepted",
			manifest: services("      additional:\n      - name: mysql-lb\n        selectorType: rw\n        serviceTemplate: {spec: {type: LoadBalancer}}\n" +
				"      - name: mysql-internal-read\n        selectorType: ro\n        updateStrategy: replace\n        serviceTemplate: {metadata: {labels: {pool: reporting}}, spec: {type: ClusterIP}}\n")},
		{name: "an additional Service name too long for <cluster>-<name> is rejected",
			manifest: strings.Replace(services("      additional:\n      - {name: "+strings.Repeat("a", 40)+", selectorType: rw}\n"),
				"%NAME%", strings.Repeat("c", 30), 1),
			wantErr: "additional Service names <cluster>-<name> must be at most 63 characters"},
		{name: "a 51-character Cluster name is rejected",
			manifest: strings.Replace(validCluster, "%NAME%", strings.Repeat("c", 51), 1),
			wantErr:  "a Cluster name is at most 50 characters"},
	})
}

func setField(u *unstructured.Unstructured, value string, path ...string) {
	if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
		panic(err)
	}
}
