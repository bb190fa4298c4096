package v1alpha1

// Condition types and reasons on a Backup's status, written after the backup ended.
const (
	// BackupArtifactsAvailable says whether the backup's archive and metadata.json are still in
	// the object store. `kubectl get backups` shows its reason in the Artifacts column.
	BackupArtifactsAvailable = "ArtifactsAvailable"
	// ReasonArtifactsStored: the backup completed and its objects were verified in the store.
	ReasonArtifactsStored = "Stored"
	// ReasonArtifactsExpired: a retention pass deleted the objects (status=False).
	ReasonArtifactsExpired = "Expired"
	// ReasonArtifactsMissing: a retention pass did not find the backup's metadata.json in the
	// store it was written to (status=False): an earlier pass deleted it without recording it, or
	// something else did.
	ReasonArtifactsMissing = "Missing"

	// BackupQueued is True while the Backup waits for another backup of its Cluster to finish:
	// one backup per Cluster runs at a time. False (reason Started) once it started.
	BackupQueued = "Queued"
	// ReasonQueuedBehind: another Backup of the Cluster runs, or an older one waits first.
	ReasonQueuedBehind = "WaitingForBackup"
	// ReasonQueuedStarted: the Backup left the queue and chose its target.
	ReasonQueuedStarted = "Started"

	// BackupRemoteCleanup reports the deletion of the remote objects when the Backup object is
	// deleted with deletionPolicy delete. True when they are gone; False while it cannot proceed.
	BackupRemoteCleanup = "RemoteCleanup"
	// ReasonCleanupFailed: the object store or the API server refused or failed a request;
	// retried with backoff.
	ReasonCleanupFailed = "CleanupFailed"
	// ReasonCleanupRefused: a Cluster's bootstrap.recovery references this Backup.
	ReasonCleanupRefused = "ReferencedByRecovery"
	// ReasonCleanupDone: the archive and metadata.json were deleted.
	ReasonCleanupDone = "Deleted"
	// ReasonCleanupBypassed: the bypass annotation removed the finalizer without deleting.
	ReasonCleanupBypassed = "Bypassed"
	// ReasonCleanupUnresolved: the object store cannot be reached: the credential Secrets are
	// gone, or neither the Backup nor its Cluster says which store holds the objects. Retried
	// with backoff; the bypass annotation ends it.
	ReasonCleanupUnresolved = "StoreUnresolved"
	// ReasonCleanupForeign: the recorded directory's metadata.json names another namespace: a
	// Cluster of the same name there shares the object store location and wrote it. Nothing is
	// deleted; retried with backoff; the bypass annotation ends it.
	ReasonCleanupForeign = "ForeignBackup"
	// ReasonCleanupWaitingForJob: the Backup was deleted while running; its Job is stopped before
	// the partial upload is deleted, so nothing writes after the cleanup.
	ReasonCleanupWaitingForJob = "WaitingForJob"
)

// RemoteCleanupFinalizer is on Backups whose effective deletion policy is delete; it is removed
// once the remote objects are deleted (or when RemoteCleanupBypassAnnotation is "true").
const RemoteCleanupFinalizer = labelPrefix + "remote-cleanup"

// RemoteCleanupBypassAnnotation set to "true" on a Backup being deleted removes the
// RemoteCleanupFinalizer without touching the object store.
const RemoteCleanupBypassAnnotation = labelPrefix + "bypass-remote-cleanup"
