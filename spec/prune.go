package spec

// Prune says what khook may delete once it leaves the spec (#22): prune:
// false turns pruning off; {crds: true} and {namespaces: true} let it delete
// CustomResourceDefinitions and Namespaces, which it otherwise keeps because
// deleting one deletes everything inside it.
type Prune struct {
	// Disabled is prune: false; it is never written as a key.
	Disabled   bool `json:"-"`
	CRDs       bool `json:"crds,omitempty"`
	Namespaces bool `json:"namespaces,omitempty"`
	// Data lets pruning delete what holds data: a PersistentVolumeClaim, a
	// PersistentVolume, a StatefulSet whose claim retention deletes its
	// claims.
	Data bool `json:"data,omitempty"`
}

// PruneOf is the pruning in force for a step: the step's own prune: over
// the spec's, where prune: false at either level turns pruning off.
func (s *Spec) PruneOf(st *Step) Prune {
	var p Prune
	if s.Prune != nil {
		p = *s.Prune
	}
	if st != nil && st.Prune != nil {
		disabled := p.Disabled
		p = *st.Prune
		p.Disabled = p.Disabled || disabled
	}
	return p
}

// PruneDisabled reports whether the spec turns pruning off for every step.
func (s *Spec) PruneDisabled() bool { return s.Prune != nil && s.Prune.Disabled }

// pruneStep checks a step's prune: it applies to what helm and apply steps
// put in the cluster.
func (v *validator) pruneStep(st *Step) {
	p := st.Path
	if st.Prune == nil && !v.written(p+".prune") {
		return
	}
	if t := st.Type(); t != TypeHelm && t != TypeApply {
		v.errorf(p+".prune", "remove it: only what helm and apply steps put in the cluster is pruned", "prune: applies to helm and apply steps, not to a %s step", t)
	}
}

func pruneSchema(what string) obj {
	return obj{
		"anyOf": []any{defRef("bool"), object(obj{
			"crds":       desc(defRef("bool"), "Delete CustomResourceDefinitions that left the spec (deleting one deletes every resource of its kind)"),
			"namespaces": desc(defRef("bool"), "Delete Namespaces that left the spec (deleting one deletes everything in it)"),
			"data":       desc(defRef("bool"), "Delete what holds data that left the spec: PersistentVolumeClaims, PersistentVolumes, StatefulSets whose persistentVolumeClaimRetentionPolicy deletes their claims (their data goes)"),
		})},
		"description": what,
	}
}
