package specs

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func backupJobFixture() (*mysqlv1alpha1.Backup, *mysqlv1alpha1.Cluster) {
	c := testCluster()
	token := mysqlv1alpha1.SecretKeySelector{Name: "s3-token", Key: "token"}
	c.Spec.Backup = &mysqlv1alpha1.BackupConfiguration{ObjectStore: &mysqlv1alpha1.ObjectStoreConfiguration{
		Bucket: "bk", Path: "prod", Endpoint: "https://s3.example", Region: "eu-1", ForcePathStyle: true,
		EndpointCA: &mysqlv1alpha1.SecretKeySelector{Name: "s3-ca", Key: "ca.pem"},
		Credentials: mysqlv1alpha1.S3Credentials{
			AccessKeyID:     mysqlv1alpha1.SecretKeySelector{Name: "s3", Key: "id"},
			SecretAccessKey: mysqlv1alpha1.SecretKeySelector{Name: "s3", Key: "secret"},
			SessionToken:    &token,
		},
	}}
	b := &mysqlv1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "bk-uid"},
		Spec: mysqlv1alpha1.BackupSpec{Cluster: mysqlv1alpha1.LocalObjectReference{Name: "db"},
			Method: mysqlv1alpha1.BackupMethodClone, Timeout: &metav1.Duration{Duration: 2 * time.Hour}},
	}
	return b, c
}

func TestBuildBackupJob(t *testing.T) {
	b, c := backupJobFixture()
	job := BuildBackupJob(b, c, BackupJobParams{OperatorImage: "op:1", BackupID: "20260101T000000Z", Instance: "db-2"})
	pod := job.Spec.Template.Spec
	ctr := pod.Containers[0]
	args := ctr.Args
	mounted := func(path string) bool {
		for _, m := range ctr.VolumeMounts {
			if strings.HasPrefix(path, m.MountPath+"/") {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the Job is named after the Backup", job.Name == "nightly" && job.Namespace == "ns"},
		{"the Backup owns the Job", len(job.OwnerReferences) == 1 && job.OwnerReferences[0].UID == "bk-uid" &&
			job.OwnerReferences[0].Kind == "Backup" && *job.OwnerReferences[0].Controller},
		{"one attempt, never retried", *job.Spec.BackoffLimit == 0 && pod.RestartPolicy == corev1.RestartPolicyNever},
		{"bounded by the Backup's timeout", job.Spec.ActiveDeadlineSeconds != nil && *job.Spec.ActiveDeadlineSeconds == 7200},
		{"no service account token", pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken},
		{"runs the manager in the Cluster's image", ctr.Image == c.Spec.ImageName &&
			slices.Equal(ctr.Command, []string{ManagerPath, "backup"}) && pod.InitContainers[0].Image == "op:1"},
		{"no environment at all", len(ctr.Env) == 0 && len(ctr.EnvFrom) == 0},
		{"targets the instance's headless Service", slices.Contains(args, "--target-host=db-2.ns.svc") &&
			slices.Contains(args, "--target-port=3306")},
		{"names the backup", slices.Contains(args, "--backup-id=20260101T000000Z") &&
			slices.Contains(args, "--cluster=db") && slices.Contains(args, "--method=clone")},
		{"records the Cluster's namespace in metadata.json", slices.Contains(args, "--namespace=ns")},
		{"locates the object store", slices.Contains(args, "--bucket=bk") && slices.Contains(args, "--path=prod") &&
			slices.Contains(args, "--endpoint=https://s3.example") && slices.Contains(args, "--force-path-style=true")},
		{"the termination message is read from the file", ctr.TerminationMessagePath == corev1.TerminationMessagePathDefault},
	} {
		if !tc.ok {
			t.Errorf("rule %q does not hold", tc.rule)
		}
	}
	// Every secret is a flag naming a file under a read-only mount, never a value.
	var files int
	for _, a := range args {
		flag, value, _ := strings.Cut(a, "=")
		if strings.HasSuffix(flag, "-file") {
			files++
			if !mounted(value) {
				t.Errorf("%s points at %s, which no volume mounts", flag, value)
			}
		}
		if strings.Contains(flag, "password") && !strings.HasSuffix(flag, "-file") {
			t.Errorf("argument %q carries a password", a)
		}
	}
	if files != 8 { // password, CA, cert, key, access key id, secret, session token, endpoint CA
		t.Errorf("%d secret files, want 8: %q", files, args)
	}
	secrets := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secrets[v.Secret.SecretName] = true
		}
	}
	for _, s := range []string{"db-backup", "db-replication-client-tls", "s3", "s3-token", "s3-ca"} {
		if !secrets[s] {
			t.Errorf("Secret %s is not mounted: %v", s, secrets)
		}
	}
}

// TestBackupJobWritesWhereTheBackupRecorded: the Job writes to the object store and directory the
// Backup recorded when it chose its destination, with the incarnation's uid, even when the
// Cluster's path or serverName changed since; a Backup that recorded none uses the Cluster's.
func TestBackupJobWritesWhereTheBackupRecorded(t *testing.T) {
	b, c := backupJobFixture()
	c.UID = "cluster-uid"
	c.Spec.Backup.ServerName = "db-v2"
	args := BuildBackupJob(b, c, BackupJobParams{BackupID: "1", Instance: "db-2"}).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--cluster=db-v2") || !slices.Contains(args, "--path=prod") || !slices.Contains(args, "--cluster-uid=cluster-uid") {
		t.Errorf("no recorded destination: args %v, want the Cluster's serverName, path and uid", args)
	}
	recorded := c.Spec.Backup.ObjectStore.DeepCopy()
	b.Status.ObjectStore, b.Status.DestinationPath = recorded, "prod/db-v2/nightly/1/"
	c.Spec.Backup.ServerName, c.Spec.Backup.ObjectStore.Path = "db-v3", "elsewhere"
	args = BuildBackupJob(b, c, BackupJobParams{BackupID: "1", Instance: "db-2"}).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--cluster=db-v2") || !slices.Contains(args, "--path=prod") {
		t.Errorf("after the Cluster moved its location: args %v, want the recorded prod/db-v2/", args)
	}
}
