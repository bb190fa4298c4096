package v1alpha1_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestListsLeaveOutItemsThatDoNotDecode decodes lists through the same codec the operator's
// clients and informers use: the items that decode are kept, in order, with the list's metadata;
// each one that does not is left out and reported by kind, namespace and name. The object alone
// still fails to decode.
func TestListsLeaveOutItemsThatDoNotDecode(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	item := func(kind, name, extra string) string {
		return `{"apiVersion":"mysql.cloudnative-mysql.io/v1alpha1","kind":"` + kind + `","metadata":{"namespace":"acc","name":"` + name + `"}` + extra + `}`
	}
	badQuantity := item("Cluster", "bad-quantity", `,"spec":{"instances":1,"resources":{"limits":{"example.com/x":"1e1.5"}}}`)
	for _, tc := range []struct {
		rule     string
		kind     string
		items    []string
		wantKept []string
		wantLeft []string
	}{
		{"a Cluster with a quantity that does not parse is left out", "Cluster",
			[]string{item("Cluster", "a", ""), badQuantity, item("Cluster", "b", "")}, []string{"a", "b"}, []string{"acc/bad-quantity"}},
		{"a Cluster with a lower-case time is left out", "Cluster",
			[]string{item("Cluster", "bad-time", `,"status":{"currentPrimaryTimestamp":"2026-11-25t04:00:00z"}`), item("Cluster", "a", "")},
			[]string{"a"}, []string{"acc/bad-time"}},
		{"a Backup with a lower-case time is left out", "Backup",
			[]string{item("Backup", "bad", `,"status":{"startedAt":"2026-11-25T04:00:00z"}`), item("Backup", "a", "")},
			[]string{"a"}, []string{"acc/bad"}},
		{"a ScheduledBackup with a lower-case time is left out", "ScheduledBackup",
			[]string{item("ScheduledBackup", "a", ""), item("ScheduledBackup", "bad", `,"status":{"lastScheduleTime":"2026-11-25t02:00:00Z"}`)},
			[]string{"a"}, []string{"acc/bad"}},
		{"a list whose items all decode is whole", "Cluster",
			[]string{item("Cluster", "a", ""), item("Cluster", "b", "")}, []string{"a", "b"}, nil},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var left []string
			v1.UndecodableItem = func(kind, namespace, name string, err error) {
				if kind != tc.kind || err == nil {
					t.Errorf("reported %s %s/%s with error %v", kind, namespace, name, err)
				}
				left = append(left, namespace+"/"+name)
			}
			defer func() { v1.UndecodableItem = nil }()
			list := `{"apiVersion":"mysql.cloudnative-mysql.io/v1alpha1","kind":"` + tc.kind + `List","metadata":{"resourceVersion":"42"},"items":[` +
				strings.Join(tc.items, ",") + `]}`
			obj, _, err := codec.Decode([]byte(list), nil, nil)
			if err != nil {
				t.Fatalf("decoding the list: %v", err)
			}
			var kept []string
			var rv string
			if err := obj.(interface{ Complete() error }).Complete(); (err != nil) != (len(tc.wantLeft) > 0) ||
				(err != nil && !errors.Is(err, v1.ErrIncompleteList)) {
				t.Errorf("Complete() = %v with %d items left out", err, len(tc.wantLeft))
			}
			switch l := obj.(type) {
			case *v1.ClusterList:
				rv = l.ResourceVersion
				for _, c := range l.Items {
					kept = append(kept, c.Name)
				}
			case *v1.BackupList:
				rv = l.ResourceVersion
				for _, b := range l.Items {
					kept = append(kept, b.Name)
				}
			case *v1.ScheduledBackupList:
				rv = l.ResourceVersion
				for _, s := range l.Items {
					kept = append(kept, s.Name)
				}
			default:
				t.Fatalf("decoded a %T", obj)
			}
			if rv != "42" {
				t.Errorf("resourceVersion %q, want 42", rv)
			}
			if strings.Join(kept, ",") != strings.Join(tc.wantKept, ",") || strings.Join(left, ",") != strings.Join(tc.wantLeft, ",") {
				t.Errorf("kept %v, left out %v; want %v and %v", kept, left, tc.wantKept, tc.wantLeft)
			}
		})
	}

	if _, _, err := codec.Decode([]byte(badQuantity), nil, nil); err == nil {
		t.Error("the Cluster alone decoded; a read of it must fail")
	}
	var c v1.Cluster
	if err := json.Unmarshal([]byte(badQuantity), &c); err == nil {
		t.Error("the Cluster alone decoded with encoding/json")
	}
}
