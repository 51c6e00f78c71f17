package spec

// crdsOnly refuses the fields of a helm step that mean nothing once it
// installs no release (crds: only): each is one problem at its line.
func (v *validator) crdsOnly(p string, st *Step) {
	h := st.Helm
	if h == nil || !h.OnlyCRDs() {
		return
	}
	hp := p + ".helm"
	for _, f := range []struct{ path, why, hint string }{
		{hp + ".test", "there is no release to test", "remove test:, or test the release in a helm step that installs it"},
		{hp + ".wait", "there is no release to wait for (its CRDs are always awaited Established)", "remove wait:"},
		{hp + ".atomic", "there is no release to roll back", "remove atomic:"},
		{hp + ".takeOwnership", "no release owns its CRDs: they are applied server-side with khook's field manager", "remove takeOwnership:"},
		{hp + ".skipIf", "there is no release to be installed", "remove skipIf:"},
		{hp + ".createNamespace", "CRDs are cluster-scoped: nothing goes in the namespace", "remove createNamespace:; namespace: only sets the chart's .Release.Namespace"},
		{hp + ".deleteCRDs", "no upgrade drops a CRD: a CRD the chart stops rendering is pruned", "write prune: {crds: true} on the step instead"},
		{p + ".onImmutable", "a CRD has no immutable field to recreate for", "remove onImmutable:"},
	} {
		if v.written(f.path) {
			v.errorf(f.path, f.hint, "does not apply with crds: only: %s", f.why)
		}
	}
}
