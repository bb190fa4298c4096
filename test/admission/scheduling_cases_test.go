package admission_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestClusterSchedulingFields(t *testing.T) {
	withSpec := func(extra string) string { return validCluster + extra }
	affinity := func(a string) string { return withSpec("  affinity: " + a + "\n") }
	runAdmissionCases(t, []admissionCase{
		{name: "required anti-affinity on zones is accepted",
			manifest: affinity("{podAntiAffinityType: required, topologyKey: topology.kubernetes.io/zone}")},
		{name: "an unknown anti-affinity type is rejected", manifest: affinity("{podAntiAffinityType: sometimes}"),
			wantErr: "spec.affinity.podAntiAffinityType: Unsupported value"},
		{name: "a topology key with spaces is rejected", manifest: affinity("{topologyKey: \"my zone\"}"),
			wantErr: "topologyKey must be a label key"},
		{name: "a node selector and tolerations are accepted",
			manifest: affinity("{nodeSelector: {pool: db}, tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}, {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]}")},
		{name: "a toleration without a key must use Exists", manifest: affinity("{tolerations: [{operator: Equal, value: db}]}"),
			wantErr: "a toleration without a key must use operator Exists"},
		{name: "a toleration with Exists and a value is rejected", manifest: affinity("{tolerations: [{key: a, operator: Exists, value: db}]}"),
			wantErr: "a toleration with operator Exists must not have a value"},
		{name: "tolerationSeconds without NoExecute is rejected", manifest: affinity("{tolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}]}"),
			wantErr: "tolerationSeconds applies only to effect NoExecute"},
		{name: "tolerationSeconds beyond 2^53-1 is rejected (the decoder's bound)",
			manifest: affinity("{tolerations: [{key: a, operator: Exists, effect: NoExecute, tolerationSeconds: 9007199254740992}]}"),
			wantErr:  "tolerationSeconds"},
		{name: "a toleration value with spaces is rejected", manifest: affinity("{tolerations: [{key: a, operator: Equal, value: \"d b\"}]}"),
			wantErr: "a toleration value must be a label value"},
		{name: "minDomains with ScheduleAnyway is rejected",
			manifest: withSpec("  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}]\n"),
			wantErr:  "minDomains applies only with whenUnsatisfiable DoNotSchedule"},
		{name: "an unknown taint effect is rejected", manifest: affinity("{tolerations: [{key: a, operator: Exists, effect: Evict}]}"),
			wantErr: "Unsupported value"},
		{name: "a topology spread constraint is accepted",
			manifest: withSpec("  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, minDomains: 2, nodeTaintsPolicy: Honor}]\n")},
		{name: "a spread constraint with maxSkew 0 is rejected",
			manifest: withSpec("  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n"),
			wantErr:  "maxSkew"},
		{name: "a spread constraint with maxSkew beyond int32 is rejected",
			manifest: withSpec("  topologySpreadConstraints: [{maxSkew: 2147483648, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n"),
			wantErr:  "maxSkew"},
		{name: "a priority class with capitals is rejected", manifest: withSpec("  priorityClassName: High\n"),
			wantErr: "priorityClassName must be a lower-case DNS subdomain"},
		{name: "Pod labels and annotations are accepted",
			manifest: withSpec("  podMetadata: {labels: {team: payments, example.com/tier: gold}, annotations: {example.com/owner: \"the DBA team\"}}\n")},
		{name: "a Pod label under the operator's prefix is rejected",
			manifest: withSpec("  podMetadata: {labels: {mysql.cloudnative-mysql.io/role: primary}}\n"),
			wantErr:  "podMetadata.labels must not use the operator's prefix"},
		{name: "a Pod annotation under the operator's prefix is rejected",
			manifest: withSpec("  podMetadata: {annotations: {mysql.cloudnative-mysql.io/pod-spec-hash: x}}\n"),
			wantErr:  "podMetadata.annotations must not use the operator's prefix"},
	})
}

func TestClusterStorageSizeChanges(t *testing.T) {
	size := func(v any) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			if err := unstructured.SetNestedField(u.Object, v, "spec", "storage", "size"); err != nil {
				panic(err)
			}
		}
	}
	runAdmissionCases(t, []admissionCase{
		{name: "raising storage.size is accepted", manifest: validCluster, update: size("2Gi")},
		{name: "raising storage.size to a number of bytes is accepted", manifest: validCluster, update: size(int64(2147483648))},
		{name: "the same size written otherwise is accepted", manifest: validCluster, update: size("1024Mi")},
		// A smaller size is admitted (a refused growth must be revertible); the operator applies
		// no shrink and says so (StorageResized ShrinkNotSupported).
		{name: "lowering storage.size is admitted", manifest: validCluster, update: size("512Mi")},
	})
}
