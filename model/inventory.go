package model

import "strings"

// Owned is one thing a step put in the cluster, as its inventory records it
// (#22): an object applied by an apply step (with the UID it had then), or
// a helm step's release (Kind KindRelease, no group, version or UID).
type Owned struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// Adopted: the object existed, not written by khook, when khook first
	// applied it; pruning keeps it (khook deletes only what it created).
	Adopted bool `json:"adopted,omitempty"`
}

// Key identifies the object across API versions: a new apiVersion of the
// same object is not a new object.
func (o Owned) Key() string {
	return o.Group + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}

// IsRelease reports whether o is a helm step's release.
func (o Owned) IsRelease() bool { return o.Kind == KindRelease && o.Group == "" }

// String is "ConfigMap demo/settings", "HelmRelease monitoring/prometheus".
func (o Owned) String() string {
	kind := o.Kind
	if o.Group != "" && !o.IsRelease() {
		kind += "." + o.Group
	}
	if o.Namespace == "" {
		return kind + " " + o.Name
	}
	return kind + " " + o.Namespace + "/" + o.Name
}

// Inventory is what a step put in the cluster in one run; nil on a result
// means the step took none (it failed, was skipped or resumed), so the
// previous one stands.
type Inventory struct {
	Items []Owned
}

// TypePrune is the type of the plan steps and results that prune what a
// step no longer produces, or what a step that left the spec left behind.
const TypePrune = "prune"

// PruneStepName names the pruning of a step's leftovers: "prune/cms". Step
// names are RFC 1123 labels, so it never collides with one.
func PruneStepName(step string) string { return TypePrune + "/" + step }

// PrunedStep returns the step a prune step's name prunes ("" otherwise).
func PrunedStep(name string) string {
	s, ok := strings.CutPrefix(name, TypePrune+"/")
	if !ok {
		return ""
	}
	return s
}
