package v1alpha1

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sjson "sigs.k8s.io/json"
)

// A list of Clusters, Backups or ScheduledBackups decodes each item on its own and leaves out an
// item that does not decode. One stored object the Go types cannot read (written under an older,
// looser schema, or by a path admission does not check) would otherwise fail every list of its
// kind, and with it the operator's informer: no object of that kind in any namespace would be
// reconciled. Left out of a list, the object is reconciled by nobody and reported through
// UndecodableItem; a read of that object alone still fails, for that object only. A reader that
// decides what may be deleted (retention, a Backup's cleanup) must see every object, so it calls
// the list's Complete and fails closed. A watch event
// that does not decode ends the watch with an error, and the informer lists again, so it is
// skipped the same way.

// UndecodableItem, when set, is told of each list item left out: the operator logs it and counts
// it in a metric. It runs inside JSON decoding, which carries no context.
var UndecodableItem func(kind, namespace, name string, err error)

// listEnvelope is a list whose items are kept undecoded.
type listEnvelope struct {
	metav1.TypeMeta
	Metadata metav1.ListMeta   `json:"metadata,omitempty"`
	Items    []json.RawMessage `json:"items"`
}

// ErrIncompleteList: a list left out items that do not decode, and its reader must see them all.
var ErrIncompleteList = errors.New("objects that do not decode were left out of the list")

// completeList returns ErrIncompleteList naming the items left out, nil when there are none.
func completeList(kind string, undecodable []string) error {
	if len(undecodable) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s %s; fix or delete them", ErrIncompleteList, kind, strings.Join(undecodable, ", "))
}

// decodeList decodes data into its type and list metadata, and each item into a T, leaving out
// the items that do not decode; undecodable names those ("namespace/name").
func decodeList[T any](kind string, data []byte, tm *metav1.TypeMeta, lm *metav1.ListMeta, undecodable *[]string) ([]T, error) {
	var env listEnvelope
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(data, &env); err != nil {
		return nil, fmt.Errorf("decoding a %sList: %w", kind, err)
	}
	*tm, *lm, *undecodable = env.TypeMeta, env.Metadata, nil
	items := make([]T, 0, len(env.Items))
	for _, raw := range env.Items {
		var item T
		if err := k8sjson.UnmarshalCaseSensitivePreserveInts(raw, &item); err != nil {
			*undecodable = append(*undecodable, reportUndecodable(kind, raw, err))
			continue
		}
		items = append(items, item)
	}
	return items, nil
}

// reportUndecodable tells UndecodableItem of an item left out, named from its metadata alone,
// and returns that name as "namespace/name".
func reportUndecodable(kind string, raw []byte, err error) string {
	var named struct {
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &named) // best effort: an item without readable metadata is named ""
	if UndecodableItem != nil {
		UndecodableItem(kind, named.Metadata.Namespace, named.Metadata.Name, err)
	}
	return named.Metadata.Namespace + "/" + named.Metadata.Name
}

// UnmarshalJSON decodes the Clusters that decode (see UndecodableItem).
func (l *ClusterList) UnmarshalJSON(data []byte) error {
	items, err := decodeList[Cluster]("Cluster", data, &l.TypeMeta, &l.ListMeta, &l.Undecodable)
	l.Items = items
	return err
}

// Complete returns ErrIncompleteList when items were left out: a reader that decides what may be
// deleted must see every object. Only a list read from the API server (an APIReader) can say so;
// a list from the operator's cache never holds such an item, and Complete is then always nil.
func (l *ClusterList) Complete() error { return completeList("Cluster", l.Undecodable) }

// UnmarshalJSON decodes the Backups that decode (see UndecodableItem).
func (l *BackupList) UnmarshalJSON(data []byte) error {
	items, err := decodeList[Backup]("Backup", data, &l.TypeMeta, &l.ListMeta, &l.Undecodable)
	l.Items = items
	return err
}

// Complete returns ErrIncompleteList when items were left out: a reader that decides what may be
// deleted must see every object. Only a list read from the API server (an APIReader) can say so;
// a list from the operator's cache never holds such an item, and Complete is then always nil.
func (l *BackupList) Complete() error { return completeList("Backup", l.Undecodable) }

// UnmarshalJSON decodes the ScheduledBackups that decode (see UndecodableItem).
func (l *ScheduledBackupList) UnmarshalJSON(data []byte) error {
	items, err := decodeList[ScheduledBackup]("ScheduledBackup", data, &l.TypeMeta, &l.ListMeta, &l.Undecodable)
	l.Items = items
	return err
}

// Complete returns ErrIncompleteList when items were left out: a reader that decides what may be
// deleted must see every object. Only a list read from the API server (an APIReader) can say so;
// a list from the operator's cache never holds such an item, and Complete is then always nil.
func (l *ScheduledBackupList) Complete() error { return completeList("ScheduledBackup", l.Undecodable) }
