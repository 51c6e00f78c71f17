package importer

import "github.com/khook/khook/spec"

// asTheTool writes into the model what the imported tool does where the
// spec's default would do otherwise, once for both importers (a script's
// helm commands and a helmfile's releases both run helm upgrade
// --install).
//
// crds: helm install and upgrade --install create the CRDs of a chart's
// crds/ that are missing and never upgrade or delete them; khook's default
// (upgrade) also upgrades them, so every helm step the source did not say
// otherwise for (--skip-crds, a CRDs-only helmfile) gets crds: create.
//
// A chart whose crds/ the source applies itself first (helm pull --untar,
// kubectl apply -f DIR/crds) gets crds: upgrade, which is that.
// One no step installs was applied for nothing the spec does: not
// carried, said at the apply.
func asTheTool(m *Model) {
	installed := make([]bool, len(m.ChartCRDs))
	for _, st := range m.Steps {
		if h := st.Out.Helm; h != nil && h.CRDs == "" {
			h.CRDs = spec.CRDsCreate
			for i, p := range m.ChartCRDs {
				if p.Is(h) {
					h.CRDs, installed[i] = spec.CRDsUpgrade, true
				}
			}
		}
	}
	for i, p := range m.ChartCRDs {
		if installed[i] || p.Applied == (Loc{}) {
			continue
		}
		why := "the crds/ of chart " + p.Chart + ", which no step installs: apply them with a step of their own"
		for j := range m.Commands {
			if c := &m.Commands[j]; c.Loc == p.Applied && c.Fate == FateFolded {
				c.Fate, c.Why = FateNotCarried, why
				m.NotCarried = append(m.NotCarried, Note{Loc: c.Loc, What: c.Text, Why: why})
			}
		}
	}
}
