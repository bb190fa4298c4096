package admission_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The sweep below sends every field of every kind hostile values: negative, huge, a wrong unit,
// odd names, Unicode, names one character too long. Each is either rejected here with a message
// that names the rule, or accepted because the operator handles it (TestOperatorKeepsReconciling
// proves the operator goes on with a healthy Cluster beside the accepted ones).

// withBackupSpec appends fields to the minimal Backup's spec.
func withBackupSpec(extra string) string { return validBackup + extra }

const durationFormat = "timeout must be a whole number of seconds written with h, m and s"

func TestBackupHostileFields(t *testing.T) {
	runAdmissionCases(t, []admissionCase{
		{name: "timeout forever is rejected: it would not decode in the operator",
			manifest: withBackupSpec("  timeout: forever\n"), wantErr: durationFormat},
		{name: "timeout 500ms is rejected: the Job deadline counts whole seconds",
			manifest: withBackupSpec("  timeout: 500ms\n"), wantErr: durationFormat},
		{name: "a fractional timeout is rejected", manifest: withBackupSpec("  timeout: 1.5s\n"), wantErr: durationFormat},
		{name: "a negative timeout is rejected", manifest: withBackupSpec("  timeout: -1h\n"), wantErr: durationFormat},
		{name: "an empty timeout is rejected", manifest: withBackupSpec("  timeout: \"\"\n"), wantErr: durationFormat},
		{name: "a timeout without a unit is rejected", manifest: withBackupSpec("  timeout: \"30\"\n"), wantErr: durationFormat},
		{name: "a timeout in days is rejected", manifest: withBackupSpec("  timeout: 2d\n"), wantErr: durationFormat},
		{name: "a timeout that overflows a duration is rejected",
			manifest: withBackupSpec("  timeout: 99999999999h\n"), wantErr: durationFormat},
		{name: "a zero timeout is rejected", manifest: withBackupSpec("  timeout: 0s\n"), wantErr: "timeout must be between 1s and 720h"},
		{name: "a timeout above 720h is rejected", manifest: withBackupSpec("  timeout: 721h\n"), wantErr: "timeout must be between 1s and 720h"},
		{name: "a timeout of 90m is accepted", manifest: withBackupSpec("  timeout: 90m\n")},
		{name: "a timeout as Go prints it is accepted", manifest: withBackupSpec("  timeout: 1h30m0s\n")},
		{name: "a timeout of 720h is accepted", manifest: withBackupSpec("  timeout: 720h\n")},
		{name: "a timeout of 1s is accepted", manifest: withBackupSpec("  timeout: 1s\n")},
		{name: "a Backup named a.b is accepted: its Job takes the same name",
			manifest: strings.Replace(validBackup, "%NAME%", "a.b", 1)},
		{name: "a Backup named 1db is accepted", manifest: strings.Replace(validBackup, "%NAME%", "1db", 1)},
		{name: "a 63-character Backup name is accepted",
			manifest: strings.Replace(validBackup, "%NAME%", strings.Repeat("b", 63), 1)},
		{name: "an upper-case Backup name is rejected by the API server",
			manifest: strings.Replace(validBackup, "%NAME%", "Backup", 1), wantErr: "RFC 1123"},
		{name: "a Unicode Backup name is rejected by the API server",
			manifest: strings.Replace(validBackup, "%NAME%", "sauvegarde-é", 1), wantErr: "RFC 1123"},
		{name: "a cluster reference with spaces is rejected",
			manifest: strings.Replace(validBackup, "{name: c}", "{name: \"my cluster\"}", 1),
			wantErr:  "name must be a lower-case DNS subdomain"},
		{name: "a Unicode cluster reference is rejected",
			manifest: strings.Replace(validBackup, "{name: c}", "{name: \"clüster\"}", 1),
			wantErr:  "name must be a lower-case DNS subdomain"},
		{name: "an empty cluster reference is rejected",
			manifest: strings.Replace(validBackup, "{name: c}", "{name: \"\"}", 1),
			wantErr:  "spec.cluster.name: Invalid value"},
		{name: "a cluster reference to a.b is accepted: no such Cluster exists, the Backup fails",
			manifest: strings.Replace(validBackup, "{name: c}", "{name: a.b}", 1)},
		{name: "online as a string is rejected", manifest: withBackupSpec("  online: \"yes\"\n"),
			wantErr: "spec.online: Invalid value"},
	})
}

func TestScheduledBackupHostileFields(t *testing.T) {
	withSpec := func(extra string) string { return validScheduledBackup + extra }
	runAdmissionCases(t, []admissionCase{
		{name: "timeout forever is rejected", manifest: withSpec("  timeout: forever\n"), wantErr: durationFormat},
		{name: "timeout 500ms is rejected", manifest: withSpec("  timeout: 500ms\n"), wantErr: durationFormat},
		{name: "a zero timeout is rejected", manifest: withSpec("  timeout: 0h0m0s\n"), wantErr: "timeout must be between 1s and 720h"},
		{name: "a timeout of 2h is accepted", manifest: withSpec("  timeout: 2h\n")},
		{name: "a schedule of 257 characters is rejected",
			manifest: strings.Replace(validScheduledBackup, `"0 0 2 * * *"`, `"0 0 2 * * `+strings.Repeat("*", 247)+`"`, 1),
			wantErr:  "spec.schedule: Too long"},
		{name: "a Unicode schedule with six fields is accepted: the scheduler reports it does not parse",
			manifest: strings.Replace(validScheduledBackup, `"0 0 2 * * *"`, `"0 0 2 * * ☃"`, 1)},
		{name: "a negative successful history limit is rejected", manifest: withSpec("  successfulBackupsHistoryLimit: -1\n"),
			wantErr: "spec.successfulBackupsHistoryLimit: Invalid value: -1"},
		{name: "the largest int32 history limit is accepted", manifest: withSpec("  successfulBackupsHistoryLimit: 2147483647\n")},
		{name: "a history limit beyond int32 is rejected", manifest: withSpec("  failedBackupsHistoryLimit: 2147483648\n"),
			wantErr: "spec.failedBackupsHistoryLimit"},
		{name: "a 48-character ScheduledBackup named with dots is accepted",
			manifest: strings.Replace(validScheduledBackup, "%NAME%", "a.b."+strings.Repeat("s", 44), 1)},
		{name: "an upper-case cluster reference is rejected",
			manifest: strings.Replace(validScheduledBackup, "{name: c}", "{name: Main}", 1),
			wantErr:  "name must be a lower-case DNS subdomain"},
		{name: "a 254-character cluster reference is rejected",
			manifest: strings.Replace(validScheduledBackup, "{name: c}", "{name: "+strings.Repeat("c", 254)+"}", 1),
			wantErr:  "spec.cluster.name: Too long"},
	})
}

func TestClusterHostileFields(t *testing.T) {
	withSpec := func(extra string) string { return validCluster + extra }
	withBackup := func(extra string) string { return validCluster + "  backup:\n" + extra }
	store := func(from, to string) string { return withBackup(strings.Replace(objectStore, from, to, 1)) }
	services := func(extra string) string { return validCluster + "  managed:\n    services:\n" + extra }
	template := func(spec string) string {
		return services("      additional:\n      - {name: lb, selectorType: rw, serviceTemplate: {spec: " + spec + "}}\n")
	}
	named := func(name string) string { return strings.Replace(validCluster, "%NAME%", name, 1) }
	runAdmissionCases(t, []admissionCase{
		{name: "a Cluster named a.b is rejected: Service names cannot hold dots",
			manifest: named("a.b"), wantErr: "a Cluster name must be a DNS-1035 label"},
		{name: "a Cluster named 1db is rejected: Service names start with a letter",
			manifest: named("1db"), wantErr: "a Cluster name must be a DNS-1035 label"},
		{name: "a Cluster name ending in - is rejected", manifest: named("db-"), wantErr: "RFC 1123"},
		{name: "a 50-character Cluster name is accepted", manifest: named(strings.Repeat("d", 50))},
		{name: "a Unicode Cluster name is rejected by the API server", manifest: named("base-données"), wantErr: "RFC 1123"},
		{name: "negative instances are rejected", manifest: strings.Replace(validCluster, "instances: 3", "instances: -1", 1),
			wantErr: "spec.instances: Invalid value: -1"},
		{name: "65 instances are rejected", manifest: strings.Replace(validCluster, "instances: 3", "instances: 65", 1),
			wantErr: "spec.instances: Invalid value: 65"},
		{name: "instances beyond int32 are rejected", manifest: strings.Replace(validCluster, "instances: 3", "instances: 4294967296", 1),
			wantErr: "spec.instances"},
		{name: "instances as a string are rejected", manifest: strings.Replace(validCluster, "instances: 3", `instances: "3"`, 1),
			wantErr: "spec.instances: Invalid value"},
		{name: "an empty imageName is rejected", manifest: withSpec("  imageName: \"\"\n"),
			wantErr: "spec.imageName: Invalid value"},
		{name: "an imageName with spaces is rejected", manifest: withSpec("  imageName: \"mysql 8\"\n"),
			wantErr: "imageName must be an image reference"},
		{name: "a Unicode imageName is rejected", manifest: withSpec("  imageName: \"mysql:☃\"\n"),
			wantErr: "imageName must be an image reference"},
		{name: "an imageName with a digest is accepted",
			manifest: withSpec("  imageName: registry.local:5000/mysql/server@sha256:" + strings.Repeat("a", 64) + "\n")},
		{name: "a negative storage.size is rejected", manifest: strings.Replace(validCluster, "size: 1Gi", "size: -1Gi", 1),
			wantErr: "storage.size must be greater than zero"},
		{name: "a zero storage.size is rejected", manifest: strings.Replace(validCluster, "size: 1Gi", "size: \"0\"", 1),
			wantErr: "storage.size must be greater than zero"},
		{name: "a storage.size in bytes as a number is accepted", manifest: strings.Replace(validCluster, "size: 1Gi", "size: 1073741824", 1)},
		{name: "a negative storage.size as a number is rejected", manifest: strings.Replace(validCluster, "size: 1Gi", "size: -5", 1),
			wantErr: "storage.size must be greater than zero"},
		{name: "a storage.size with a wrong unit is rejected", manifest: strings.Replace(validCluster, "size: 1Gi", "size: 1GB", 1),
			wantErr: "spec.storage.size"},
		{name: "a huge storage.size is accepted: the storage class decides", manifest: strings.Replace(validCluster, "size: 1Gi", "size: 8Ei", 1)},
		{name: "a storageClass with spaces is rejected", manifest: strings.Replace(validCluster, "size: 1Gi", "size: 1Gi, storageClass: \"fast ssd\"", 1),
			wantErr: "storageClass must be a lower-case DNS subdomain"},
		{name: "a storageClass with dots is accepted", manifest: strings.Replace(validCluster, "size: 1Gi", "size: 1Gi, storageClass: fast.ssd", 1)},
		{name: "a negative failoverDelay is rejected", manifest: withSpec("  failoverDelay: -1\n"),
			wantErr: "spec.failoverDelay: Invalid value: -1"},
		{name: "the largest failoverDelay is accepted", manifest: withSpec("  failoverDelay: 2147483647\n")},
		{name: "a zero maxSwitchoverDelay is rejected", manifest: withSpec("  maxSwitchoverDelay: 0\n"),
			wantErr: "spec.maxSwitchoverDelay: Invalid value: 0"},
		{name: "a negative minSyncReplicas is rejected", manifest: withSpec("  minSyncReplicas: -1\n"),
			wantErr: "spec.minSyncReplicas: Invalid value: -1"},
		{name: "a semi-sync timeout beyond the server's range is rejected",
			manifest: withSpec("  minSyncReplicas: 1\n  maxSyncReplicas: 1\n  mysql:\n    semiSync: {enabled: true, timeoutMillis: 4294967296}\n"),
			wantErr:  "spec.mysql.semiSync.timeoutMillis: Invalid value"},
		{name: "a zero semi-sync timeout is rejected",
			manifest: withSpec("  mysql:\n    semiSync: {timeoutMillis: 0}\n"),
			wantErr:  "spec.mysql.semiSync.timeoutMillis: Invalid value: 0"},
		{name: "hostile mysql parameters are accepted: the instance manager leaves them out of my.cnf and logs them",
			manifest: withSpec("  mysql:\n    parameters: {\"a\\nb\": \"x\", server_id: \"7\", max_connections: \"☃\"}\n")},
		{name: "a negative CPU request is rejected", manifest: withSpec("  resources: {requests: {cpu: \"-1\"}}\n"),
			wantErr: "resources.requests cpu, memory and ephemeral-storage must not be negative"},
		{name: "a negative memory limit as a number is rejected", manifest: withSpec("  resources: {limits: {memory: -5}}\n"),
			wantErr: "resources.limits cpu, memory and ephemeral-storage must not be negative"},
		{name: "a memory request above its limit is rejected",
			manifest: withSpec("  resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}\n"),
			wantErr:  "resources.requests cpu, memory and ephemeral-storage must not exceed their limits"},
		{name: "requests within limits are accepted",
			manifest: withSpec("  resources: {requests: {memory: 1Gi, cpu: 500m}, limits: {memory: 1Gi, cpu: \"2\"}}\n")},
		{name: "a negative ephemeral-storage request is rejected", manifest: withSpec("  resources: {requests: {ephemeral-storage: \"-1\"}}\n"),
			wantErr: "resources.requests cpu, memory and ephemeral-storage must not be negative"},
		{name: "a negative ephemeral-storage limit as a number is rejected", manifest: withSpec("  resources: {limits: {ephemeral-storage: -5}}\n"),
			wantErr: "resources.limits cpu, memory and ephemeral-storage must not be negative"},
		{name: "a negative ephemeral-storage limit with a unit is rejected", manifest: withSpec("  resources: {limits: {ephemeral-storage: -1Gi}}\n"),
			wantErr: "resources.limits cpu, memory and ephemeral-storage must not be negative"},
		{name: "an ephemeral-storage request above its limit is rejected",
			manifest: withSpec("  resources: {requests: {ephemeral-storage: 2Gi}, limits: {ephemeral-storage: 1Gi}}\n"),
			wantErr:  "resources.requests cpu, memory and ephemeral-storage must not exceed their limits"},
		{name: "an ephemeral-storage request within its limit is accepted",
			manifest: withSpec("  resources: {requests: {ephemeral-storage: 1Gi}, limits: {ephemeral-storage: 2Gi}}\n")},
		{name: "an S3 bucket with upper case is rejected", manifest: store("bucket: backups", "bucket: My_Backups"),
			wantErr: "bucket must be an S3 bucket name"},
		{name: "a Unicode S3 bucket is rejected", manifest: store("bucket: backups", "bucket: sauvegardés"),
			wantErr: "bucket must be an S3 bucket name"},
		{name: "a 64-character bucket is rejected", manifest: store("bucket: backups", "bucket: "+strings.Repeat("b", 64)),
			wantErr: "spec.backup.objectStore.bucket: Too long"},
		{name: "an endpoint without a host is rejected", manifest: store("http://127.0.0.1:9000", "http://"),
			wantErr: "endpoint must be a URL with a host"},
		{name: "an endpoint with spaces is rejected", manifest: store("http://127.0.0.1:9000", "\"https://s3 .local\""),
			wantErr: "endpoint must be a URL with a host"},
		{name: "a plain http endpoint off the node is rejected without the opt-in",
			manifest: store("http://127.0.0.1:9000", "http://s3.example.internal:9000"),
			wantErr:  "a plain http endpoint sends the object store credentials and every backup unencrypted"},
		{name: "a plain http endpoint is accepted with allowInsecureEndpoint",
			manifest: withBackup(strings.Replace(objectStore, "http://127.0.0.1:9000", "http://s3.example.internal:9000", 1) +
				"      allowInsecureEndpoint: true\n")},
		{name: "allowInsecureEndpoint false keeps the rejection",
			manifest: withBackup(strings.Replace(objectStore, "http://127.0.0.1:9000", "http://10.0.0.7", 1) +
				"      allowInsecureEndpoint: false\n"),
			wantErr: "set allowInsecureEndpoint: true to accept that"},
		{name: "a loopback http endpoint needs no opt-in", manifest: store("http://127.0.0.1:9000", "http://localhost:9000")},
		{name: "a host merely starting with localhost is not loopback",
			manifest: store("http://127.0.0.1:9000", "http://localhost.evil.example"),
			wantErr:  "a plain http endpoint sends the object store credentials"},
		{name: "a host name starting with 127. is not loopback",
			manifest: store("http://127.0.0.1:9000", "http://127.evil.example"),
			wantErr:  "a plain http endpoint sends the object store credentials"},
		{name: "another loopback address needs no opt-in", manifest: store("http://127.0.0.1:9000", "http://127.0.0.53:9000")},
		{name: "the IPv6 loopback needs no opt-in", manifest: store("http://127.0.0.1:9000", "\"http://[::1]:9000\"")},
		{name: "a loopback name with a path needs no opt-in", manifest: store("http://127.0.0.1:9000", "http://localhost/s3")},
		{name: "an endpoint longer than 512 characters is rejected",
			manifest: store("http://127.0.0.1:9000", "https://s3.example/"+strings.Repeat("p", 512)),
			wantErr:  "spec.backup.objectStore.endpoint: Too long"},
		{name: "an https endpoint needs no opt-in", manifest: store("http://127.0.0.1:9000", "https://s3.example.internal")},
		{name: "an upper-case scheme is rejected", manifest: store("http://127.0.0.1:9000", "HTTP://s3.example.internal"),
			wantErr: "spec.backup.objectStore.endpoint in body should match"},
		{name: "a region with spaces is rejected", manifest: withBackup(objectStore + "      region: \"us east\"\n"),
			wantErr: "region consists of lower-case letters, digits and '-'"},
		{name: "a credentials key with a slash is rejected", manifest: store("key: id}", "key: a/b}"),
			wantErr: "a Secret key consists of letters, digits"},
		{name: "a credentials Secret name with upper case is rejected", manifest: store("{name: s3, key: id}", "{name: S3, key: id}"),
			wantErr: "a Secret name must be a lower-case DNS subdomain"},
		{name: "a path starting with / is rejected", manifest: withBackup(objectStore + "      path: /abs\n"),
			wantErr: "spec.backup.objectStore.path in body should match"},
		{name: "a retention window of 1000 days is rejected", manifest: withBackup(objectStore + "    retentionPolicy: 1000d\n"),
			wantErr: "spec.backup.retentionPolicy in body should match"},
		{name: "a negative retention window is rejected", manifest: withBackup(objectStore + "    retentionPolicy: -1d\n"),
			wantErr: "spec.backup.retentionPolicy in body should match"},
		{name: "a negative retentionCount is rejected", manifest: withBackup(objectStore + "    retentionCount: -1\n"),
			wantErr: "spec.backup.retentionCount: Invalid value: -1"},
		{name: "a negative retentionSize is rejected", manifest: withBackup(objectStore + "    retentionSize: -1Gi\n"),
			wantErr: "retentionSize must be greater than zero"},
		{name: "an additional Service named a.b is rejected",
			manifest: services("      additional:\n      - {name: a.b, selectorType: rw}\n"),
			wantErr:  "spec.managed.services.additional[0].name in body should match"},
		{name: "an additional Service named 1db is rejected",
			manifest: services("      additional:\n      - {name: 1db, selectorType: rw}\n"),
			wantErr:  "spec.managed.services.additional[0].name in body should match"},
		{name: "17 additional Services are rejected",
			manifest: services("      additional:\n" + seventeenServices()),
			wantErr:  "spec.managed.services.additional: Too many"},
		{name: "a source range that is not a CIDR is rejected", manifest: template("{type: LoadBalancer, loadBalancerSourceRanges: [everywhere]}"),
			wantErr: "loadBalancerSourceRanges must be CIDRs"},
		{name: "a CIDR source range is accepted", manifest: template("{type: LoadBalancer, loadBalancerSourceRanges: [10.0.0.0/8]}")},
		{name: "a negative healthCheckNodePort is rejected", manifest: template("{healthCheckNodePort: -1}"),
			wantErr: "healthCheckNodePort: Invalid value: -1"},
		{name: "a healthCheckNodePort above 65535 is rejected", manifest: template("{healthCheckNodePort: 70000}"),
			wantErr: "healthCheckNodePort: Invalid value: 70000"},
		{name: "a healthCheckNodePort without a local LoadBalancer is rejected", manifest: template("{type: LoadBalancer, healthCheckNodePort: 30000}"),
			wantErr: "healthCheckNodePort may only be set with type LoadBalancer and externalTrafficPolicy Local"},
		{name: "a healthCheckNodePort of a local LoadBalancer is accepted",
			manifest: template("{type: LoadBalancer, externalTrafficPolicy: Local, healthCheckNodePort: 30000}")},
		{name: "an externalName without type ExternalName is rejected", manifest: template("{externalName: db.example.com}"),
			wantErr: "externalName may only be set with type ExternalName"},
		{name: "type ExternalName without an externalName is rejected", manifest: template("{type: ExternalName}"),
			wantErr: "type ExternalName needs an externalName"},
		{name: "an externalName with spaces is rejected", manifest: template("{type: ExternalName, externalName: \"db host\"}"),
			wantErr: "externalName must be a lower-case DNS name"},
		{name: "an unknown Service type is rejected", manifest: template("{type: Headless}"),
			wantErr: `Unsupported value: "Headless"`},
		{name: "a recovery from a Backup named with spaces is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: \"my backup\"}\n"),
			wantErr:  "name must be a lower-case DNS subdomain"},
		{name: "a recovery from a Backup that does not exist is accepted: the Cluster waits and reports it",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: a.b}\n")},
		{name: "a recovery with neither a backup nor a source is rejected",
			manifest: withSpec("  bootstrap:\n    recovery: {}\n"),
			wantErr:  "bootstrap.recovery needs exactly one of backup"},
		{name: "a recovery with both a backup and a source is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      source:\n        clusterName: old\n" +
				strings.ReplaceAll(objectStore, "\n    ", "\n        ")),
			wantErr: "bootstrap.recovery needs exactly one of backup"},
		{name: "a recovery from a Backup without a name is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {}\n"),
			wantErr:  "spec.bootstrap.recovery.backup.name: Required value"},
		{name: "a recovery from a source is accepted",
			manifest: withSpec("  bootstrap:\n    recovery:\n      source:\n        clusterName: old\n" +
				strings.ReplaceAll(objectStore, "\n    ", "\n        "))},
		{name: "a recovery from a source without a cluster name is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      source:\n" + strings.ReplaceAll(objectStore, "\n    ", "\n        ")),
			wantErr:  "spec.bootstrap.recovery.source.clusterName: Required value"},
		{name: "a recovery from a source without an object store is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      source: {clusterName: old}\n"),
			wantErr:  "spec.bootstrap.recovery.source.objectStore: Required value"},
		{name: "a recovery source cluster name that is not a cluster name is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      source:\n        clusterName: Old_DB\n" +
				strings.ReplaceAll(objectStore, "\n    ", "\n        ")),
			wantErr: "clusterName must be a cluster name"},
		{name: "a recovery target at a time is accepted",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetTime: \"2026-11-25T04:00:00Z\"}\n")},
		{name: "a recovery target that is not a time is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetTime: yesterday}\n"),
			wantErr:  "targetTime"},
		{name: "a recovery target GTID set is accepted",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget:\n        targetGTID: \"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-77:80, 4e11fa47-71ca-11e1-9e33-c80aa9429562:tag_1:5\"\n")},
		{name: "a recovery target GTID that is not a GTID set is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetGTID: \"1-77\"}\n"),
			wantErr:  "targetGTID must be a GTID set"},
		{name: "a recovery target to the latest transaction is accepted",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetLatest: true}\n")},
		{name: "an empty recovery target is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget: {targetLatest: false}\n"),
			wantErr:  "recoveryTarget needs exactly one of targetTime, targetGTID and targetLatest"},
		{name: "a recovery target with a time and a GTID set is rejected",
			manifest: withSpec("  bootstrap:\n    recovery:\n      backup: {name: nightly}\n      recoveryTarget:\n        targetTime: \"2026-11-25T04:00:00Z\"\n        targetGTID: \"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-77\"\n"),
			wantErr:  "recoveryTarget needs exactly one of targetTime, targetGTID and targetLatest"},
	})
}

func seventeenServices() string {
	var b strings.Builder
	for i := 0; i < 17; i++ {
		b.WriteString("      - {name: s" + string(rune('a'+i)) + ", selectorType: ro}\n")
	}
	return b.String()
}

func TestClusterHostileIntegersBeyondInt32(t *testing.T) {
	withSpec := func(extra string) string { return validCluster + extra }
	// A number the API server stores but an int32 cannot hold would stop the operator's informer
	// from decoding every object of the kind: each is rejected at admission.
	runAdmissionCases(t, []admissionCase{
		{name: "failoverDelay beyond int32 is rejected", manifest: withSpec("  failoverDelay: 2147483648\n"),
			wantErr: "spec.failoverDelay: Invalid value"},
		{name: "maxSwitchoverDelay beyond int32 is rejected", manifest: withSpec("  maxSwitchoverDelay: 2147483648\n"),
			wantErr: "spec.maxSwitchoverDelay: Invalid value"},
		{name: "maxSyncReplicas beyond int32 is rejected", manifest: withSpec("  maxSyncReplicas: 4294967296\n"),
			wantErr: "spec.maxSyncReplicas: Invalid value"},
		{name: "retentionCount beyond int32 is rejected",
			manifest: withSpec("  backup:\n" + objectStore + "    retentionCount: 2147483648\n"),
			wantErr:  "spec.backup.retentionCount: Invalid value"},
		{name: "a status instance count beyond int32 is rejected", manifest: validCluster,
			statusUpdate:  func(u *unstructured.Unstructured) { setNumber(u, 2147483648, "status", "instances") },
			wantUpdateErr: "status.instances: Invalid value"},
		{name: "a status time that is not a time is rejected", manifest: validCluster,
			statusUpdate:  func(u *unstructured.Unstructured) { setField(u, "yesterday", "status", "currentPrimaryTimestamp") },
			wantUpdateErr: "status.currentPrimaryTimestamp"},
	})
}

func TestBackupHostileStatus(t *testing.T) {
	runAdmissionCases(t, []admissionCase{
		{name: "a status time that is not a time is rejected", manifest: validBackup,
			statusUpdate:  func(u *unstructured.Unstructured) { setField(u, "never", "status", "startedAt") },
			wantUpdateErr: "status.startedAt"},
		{name: "an unknown status phase is rejected", manifest: validBackup,
			statusUpdate:  func(u *unstructured.Unstructured) { setField(u, "exploded", "status", "phase") },
			wantUpdateErr: `Unsupported value: "exploded"`},
		{name: "a status size beyond int64 is rejected", manifest: validBackup,
			statusUpdate:  func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"size": 1e30} },
			wantUpdateErr: "status.size"},
	})
}

func setNumber(u *unstructured.Unstructured, value int64, path ...string) {
	if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
		panic(err)
	}
}
