package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocationPhase says whether a Cluster holds its object store location.
type LocationPhase string

const (
	// LocationClaimed: the location's marker names this Cluster: it backs up and archives there.
	LocationClaimed LocationPhase = "Claimed"
	// LocationPending: the location is not claimed yet (the claim waits or failed and is retried).
	LocationPending LocationPhase = "Pending"
	// LocationInUse: another incarnation holds the location, or it holds data of no known
	// holder: this Cluster neither backs up nor archives there.
	LocationInUse LocationPhase = "InUse"
)

// ObjectStoreLocationStatus is the claim of a Cluster on its object store location, written by the
// operator.
type ObjectStoreLocationStatus struct {
	// Location is the directory this status is about, s3://<bucket>/<path>/<serverName>/ followed
	// by the endpoint when one is set.
	// +kubebuilder:validation:MaxLength=2048
	Location string `json:"location"`
	// Phase is Claimed, Pending or InUse.
	// +kubebuilder:validation:Enum=Claimed;Pending;InUse
	Phase LocationPhase `json:"phase"`
	// Reason is CamelCase: Claimed, Adopted, Continued, ObjectStoreInUse, ClaimPending.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says why, and with InUse the choices a user has.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Message string `json:"message,omitempty"`
	// HolderUID is the UID of the Cluster incarnation the location's marker names.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	HolderUID string `json:"holderUID,omitempty"`
	// Holder is that incarnation's <namespace>/<name>.
	// +kubebuilder:validation:MaxLength=320
	// +optional
	Holder string `json:"holder,omitempty"`
	// Continues are the UIDs of earlier incarnations whose history this one continues
	// (spec.backup.continueHistory): their backups are part of this Cluster's history.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Continues []string `json:"continues,omitempty"`
	// ClaimedAt is when the holder claimed the location.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	ClaimedAt *metav1.Time `json:"claimedAt,omitempty"`
}

// ObjectStoreDirName is the directory of the Cluster's backups and archive under the object
// store's path: spec.backup.serverName, or the Cluster's name.
func (c *Cluster) ObjectStoreDirName() string {
	if b := c.Spec.Backup; b != nil && b.ServerName != "" {
		return b.ServerName
	}
	return c.Name
}

// LocationOf names the directory dir under an object store's path, as ObjectStoreLocationStatus
// records it.
func LocationOf(store *ObjectStoreConfiguration, dir string) string {
	parts := []string{store.Bucket}
	if p := strings.Trim(store.Path, "/"); p != "" {
		parts = append(parts, p)
	}
	loc := "s3://" + strings.Join(append(parts, dir), "/") + "/"
	if store.Endpoint != "" {
		loc += " at " + store.Endpoint
	}
	return loc
}

// ObjectStoreLocation is the location of the Cluster's spec.backup.objectStore, "" without one.
func (c *Cluster) ObjectStoreLocation() string {
	if c.Spec.Backup == nil || c.Spec.Backup.ObjectStore == nil {
		return ""
	}
	return LocationOf(c.Spec.Backup.ObjectStore, c.ObjectStoreDirName())
}

// HoldsObjectStoreLocation reports whether the operator recorded this Cluster (this UID) as the
// holder of the location its spec names now.
func (c *Cluster) HoldsObjectStoreLocation() bool {
	st := c.Status.ObjectStoreLocation
	loc := c.ObjectStoreLocation()
	return loc != "" && st != nil && st.Phase == LocationClaimed && st.Location == loc &&
		st.HolderUID != "" && st.HolderUID == string(c.UID)
}

// OwnIncarnations are the UIDs whose backups are this Cluster's history in its location: its own
// and those of the incarnations it continues.
func (c *Cluster) OwnIncarnations() []string {
	out := []string{string(c.UID)}
	if st := c.Status.ObjectStoreLocation; st != nil && st.HolderUID == string(c.UID) {
		out = append(out, st.Continues...)
	}
	return out
}
