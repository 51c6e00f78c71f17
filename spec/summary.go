package spec

import (
	"fmt"
	"path"
	"strings"

	"github.com/khook/khook/redact"
)

// Summary is a one-line, human description of a step's action, e.g.
// "install chart cilium 1.18.4 from https://helm.cilium.io/ into kube-system".
// URL credentials are stripped; other secrets are the caller's redactor's job.
func Summary(st *Step) string { return SummaryAs(st, HelmInstall) }

// HelmVerb is what a helm step's plan line says it does with its chart.
type HelmVerb string

// The verbs of a helm step's plan line, one per planned action.
const (
	HelmInstall   HelmVerb = "install"
	HelmUpgrade   HelmVerb = "upgrade"
	HelmUninstall HelmVerb = "uninstall"
	HelmNoChange  HelmVerb = "no change to"
)

// SummaryAs is Summary as the plan line of a helm step whose action is
// known ("upgrade chart ... as release ...", "no change to chart ... in
// ns"): the line says the action it plans. Other step types have one
// summary whatever their plan.
func SummaryAs(st *Step, helmVerb HelmVerb) string {
	if st == nil {
		return ""
	}
	var s string
	switch {
	case st.Helm != nil:
		s = helmSummary(st.Helm, helmVerb)
	case st.Apply != nil:
		a := st.Apply
		s = "apply " + sourcesSummary(a.Manifests) + inNamespace(a.Namespace, "into")
		if a.WaitFor != "" {
			s += ", wait for " + a.WaitFor
		}
	case st.Delete != nil:
		s = deleteSummary(st.Delete)
	case st.Patch != nil:
		p := st.Patch
		s = fmt.Sprintf("%s-patch %s%s", orDefault(p.Type, PatchStrategic), p.Target, inNamespace(p.Namespace, "in"))
	case st.Wait != nil:
		w := st.Wait
		s = fmt.Sprintf("wait for %s on %s%s%s", w.For, w.On, selectors(w.Selector, w.FieldSelector), scope(w.Namespace, w.AllNamespaces))
	case st.Rollout != nil:
		r := st.Rollout
		if r.Restart != "" {
			s = "restart " + r.Restart + inNamespace(r.Namespace, "in")
		} else {
			s = "wait for the rollout of " + r.Status + inNamespace(r.Namespace, "in")
		}
	case st.Job != nil:
		j := st.Job
		s = "run image " + j.Image + inNamespace(j.Namespace, "in")
		if len(j.Command) > 0 || len(j.Args) > 0 {
			s += ": " + truncate(strings.Join(append(append([]string{}, j.Command...), j.Args...), " "), 60)
		}
	default:
		return "no action"
	}
	return redact.StripURLCredentials(s)
}

func helmSummary(h *Helm, verb HelmVerb) string {
	ref := ParseChart(h.Chart)
	var b strings.Builder
	switch {
	case !h.OnlyCRDs():
		b.WriteString(string(verb) + " chart ")
	case verb == HelmNoChange:
		b.WriteString("no change to the CRDs of chart ")
	default: // crds: only installs and upgrades nothing: it applies
		b.WriteString("apply the CRDs of chart ")
	}
	b.WriteString(h.Chart)
	if h.Version != "" {
		b.WriteString(" " + h.Version)
	}
	if h.Repo != "" {
		b.WriteString(" from " + h.Repo)
	}
	if h.OnlyCRDs() {
		b.WriteString(" (crds: only, no release)")
		return b.String()
	}
	base := strings.TrimSuffix(path.Base(ref.Name), ".tgz")
	if h.Release != "" && h.Release != base {
		b.WriteString(" as release " + h.Release)
	}
	prep := "into"
	switch verb {
	case HelmUninstall:
		prep = "from"
	case HelmNoChange:
		prep = "in"
	}
	b.WriteString(inNamespace(h.Namespace, prep))
	return b.String()
}

func deleteSummary(d *Delete) string {
	switch {
	case d.Release != "":
		return "uninstall release " + d.Release + inNamespace(d.Namespace, "from")
	case d.Resource != "":
		return "delete " + d.Resource + selectors(d.Selector, d.FieldSelector) + scope(d.Namespace, d.AllNamespaces)
	}
	return "delete the objects of " + sourcesSummary(d.Manifests) + inNamespace(d.Namespace, "in")
}

// sourcesSummary names a single source, or counts several.
func sourcesSummary(srcs []Source) string {
	if len(srcs) == 1 {
		src := srcs[0]
		switch {
		case src.File != "":
			return src.File
		case src.URL != "":
			return src.URL
		case src.Kustomize != "":
			return "kustomization " + src.Kustomize
		}
		return "an inline manifest"
	}
	return fmt.Sprintf("%d manifest sources", len(srcs))
}

func inNamespace(ns, prep string) string {
	if ns == "" {
		return ""
	}
	return " " + prep + " " + ns
}

func scope(ns string, all bool) string {
	if all {
		return " in all namespaces"
	}
	return inNamespace(ns, "in")
}

func selectors(label, field string) string {
	var parts []string
	if label != "" {
		parts = append(parts, "label "+label)
	}
	if field != "" {
		parts = append(parts, "field "+field)
	}
	if len(parts) == 0 {
		return ""
	}
	return " selected by " + strings.Join(parts, " and ")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
