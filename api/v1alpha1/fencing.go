package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"
)

// FencedInstancesAnnotation on a Cluster is the user's request to fence instances: a JSON list of
// instance names, ["*"] for every instance. It is user intent, kept in metadata so that a rewrite
// of the status cannot lose it; the operator mirrors it into status.fencedInstances. The plugin's
// `fence on|off` edits it.
const FencedInstancesAnnotation = labelPrefix + "fencedInstances"

// FenceAllInstances in the fenced list fences every instance of the Cluster.
const FenceAllInstances = "*"

// ParseFencedInstances reads the value of FencedInstancesAnnotation. An empty value is an empty
// list. The result is sorted, without duplicates, and just ["*"] when "*" is in it. A value that is
// not a JSON list of non-empty strings is an error that says what is wrong, so nobody mistakes a
// typo for "nothing fenced".
func ParseFencedInstances(value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(value), &names); err != nil {
		return nil, fmt.Errorf("annotation %s must be a JSON list of instance names, like [\"db-2\"]: %w",
			FencedInstancesAnnotation, err)
	}
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("annotation %s lists an empty instance name: %s", FencedInstancesAnnotation, value)
		}
	}
	return normalizeFenced(names), nil
}

// FormatFencedInstances renders names as the value of FencedInstancesAnnotation; an empty list
// renders as "", which callers write by removing the annotation.
func FormatFencedInstances(names []string) string {
	names = normalizeFenced(names)
	if len(names) == 0 {
		return ""
	}
	b, _ := json.Marshal(names) // a []string always marshals
	return string(b)
}

// FencedInstancesContain reports whether name is fenced by names ("*" fences every name).
func FencedInstancesContain(names []string, name string) bool {
	return slices.Contains(names, FenceAllInstances) || slices.Contains(names, name)
}

// AddFencedInstance returns names with name fenced, and whether that changed anything. Adding "*"
// replaces the list: every instance is fenced.
func AddFencedInstance(names []string, name string) ([]string, bool) {
	before := normalizeFenced(names)
	after := normalizeFenced(append(slices.Clone(names), name))
	return after, !slices.Equal(before, after)
}

// RemoveFencedInstance returns names without name, and whether that changed anything. Removing
// "*" unfences every instance. Removing one instance while "*" fences all of them is an error: a
// list cannot say "all but one".
func RemoveFencedInstance(names []string, name string) ([]string, bool, error) {
	switch {
	case name == FenceAllInstances:
		return nil, len(names) > 0, nil
	case slices.Contains(names, FenceAllInstances):
		return names, false, fmt.Errorf("every instance is fenced (%q); unfence them all with %q, then fence the ones to keep fenced",
			FenceAllInstances, FenceAllInstances)
	case !slices.Contains(names, name):
		return names, false, nil
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == name }), true, nil
}

// FencedInstancesRequested returns the instances the Cluster's annotation asks to fence.
func (c *Cluster) FencedInstancesRequested() ([]string, error) {
	return ParseFencedInstances(c.Annotations[FencedInstancesAnnotation])
}

// normalizeFenced sorts and deduplicates names; "*" absorbs every other name.
func normalizeFenced(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	if slices.Contains(names, FenceAllInstances) {
		return []string{FenceAllInstances}
	}
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
