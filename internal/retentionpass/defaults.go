package retentionpass

import "time"

const (
	// DefaultIncompleteGrace is the grace of an incomplete directory when Options leaves it
	// zero: no upload of a backup lasts that long between its archive and its metadata.json.
	DefaultIncompleteGrace = 24 * time.Hour
	// DefaultMetadataConcurrency is how many metadata.json reads a pass keeps in flight when
	// Options leaves it zero.
	DefaultMetadataConcurrency = 16
	// MaxClockAhead is how far after the pass's now a backup's stoppedAt may be (the clock of
	// the Job that wrote it ahead of the operator's) before its times are not trusted.
	MaxClockAhead = 5 * time.Minute
)

func (o Options) grace() time.Duration {
	if o.IncompleteGrace <= 0 {
		return DefaultIncompleteGrace
	}
	return o.IncompleteGrace
}

func (o Options) metadataConcurrency() int {
	if o.MetadataConcurrency <= 0 {
		return DefaultMetadataConcurrency
	}
	return o.MetadataConcurrency
}
