package specs

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestBuildVerificationJob(t *testing.T) {
	b, c := backupJobFixture()
	b.Status = mysqlv1alpha1.BackupStatus{BackupID: "20260101T000000Z", DestinationPath: "s3://old/prod/db/nightly/20260101T000000Z/",
		Bucket: "old", ObjectStore: c.Spec.Backup.ObjectStore.DeepCopy()}
	c.Spec.MySQL.Parameters = map[string]string{"innodb-page-size": "8192", "loose_lower_case_table_names": "1", "max_connections": "500"}
	class := "fast"
	c.Spec.Backup.Verification = &mysqlv1alpha1.BackupVerification{Schedule: "0 0 3 * * *",
		CheckTableBudget: &metav1.Duration{Duration: 90 * time.Second},
		Storage:          &mysqlv1alpha1.VerificationStorage{Size: resource.MustParse("20Gi"), StorageClassName: &class}}
	job := BuildVerificationJob(b, c, VerificationJobParams{OperatorImage: "op:1", Name: "nightly-verify-abc123", Archive: "db"})
	pod := job.Spec.Template.Spec
	ctr := pod.Containers[0]
	var scratch *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == scratchVolume {
			scratch = &pod.Volumes[i]
		}
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the Backup owns the Job without controlling it (its backup controller ignores it)", len(job.OwnerReferences) == 1 &&
			job.OwnerReferences[0].UID == "bk-uid" && !*job.OwnerReferences[0].Controller},
		{"labelled with the Cluster and the Backup", job.Labels[mysqlv1alpha1.ClusterLabel] == "db" &&
			job.Labels[mysqlv1alpha1.VerificationLabel] == "nightly"},
		{"one attempt, bounded by the default timeout", *job.Spec.BackoffLimit == 0 && *job.Spec.ActiveDeadlineSeconds == 7200},
		{"no service account token", !*pod.AutomountServiceAccountToken},
		{"runs manager verify in the Cluster's image", ctr.Image == c.Spec.ImageName &&
			slices.Equal(ctr.Command, []string{ManagerPath, "verify"})},
		{"reads the bucket and path the Backup recorded", slices.Contains(ctr.Args, "--bucket=old") &&
			slices.Contains(ctr.Args, "--path=prod") && slices.Contains(ctr.Args, "--cluster=db")},
		{"replays the archive it is given", slices.Contains(ctr.Args, "--archive=db")},
		{"starts mysqld with the initialization-only parameters, whatever their spelling, not the others",
			slices.Contains(ctr.Args, "--mysqld-arg=--innodb_page_size=8192") &&
				slices.Contains(ctr.Args, "--mysqld-arg=--lower_case_table_names=1") &&
				!strings.Contains(strings.Join(ctr.Args, " "), "max_connections")},
		{"the check budget of the spec", slices.Contains(ctr.Args, "--check-budget=1m30s")},
		{"no credential of the Cluster is mounted, only the object store's", !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.Secret != nil && !strings.HasPrefix(v.Secret.SecretName, "s3")
		})},
		{"scratch is an ephemeral volume of the size and class asked", scratch != nil && scratch.Ephemeral != nil &&
			scratch.Ephemeral.VolumeClaimTemplate.Spec.Resources.Requests.Storage().String() == "20Gi" &&
			*scratch.Ephemeral.VolumeClaimTemplate.Spec.StorageClassName == "fast"},
		{"default requests", ctr.Resources.Requests.Memory().String() == "512Mi"},
	} {
		if !tc.ok {
			t.Errorf("%s: not so\nargs %q", tc.rule, ctr.Args)
		}
	}
}

func TestVerificationJobName(t *testing.T) {
	due := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	long := strings.Repeat("b", 63)
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the same decision names the same Job", VerificationJobName("nightly", due) == VerificationJobName("nightly", due)},
		{"another slot names another Job", VerificationJobName("nightly", due) != VerificationJobName("nightly", due.Add(time.Hour))},
		{"a 63-character Backup name gives a 63-character Job name", len(VerificationJobName(long, due)) == 63},
	} {
		if !tc.ok {
			t.Errorf("%s: not so", tc.rule)
		}
	}
}
