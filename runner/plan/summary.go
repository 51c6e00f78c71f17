package plan

import (
	"fmt"
	"strings"

	"github.com/khook/khook/spec"
)

// summary is the step's one-line description.
// TODO(spec.Summary): call spec.Summary once the spec package exports it;
// this fallback keeps the offline plan useful until then.
func summary(st *spec.Step) string {
	switch {
	case st.Helm != nil:
		h := st.Helm
		chart := h.Chart
		if h.Version != "" {
			chart += " " + h.Version
		}
		return fmt.Sprintf("install or upgrade release %s from chart %s in namespace %s", or(h.Release, st.Name), chart, or(h.Namespace, spec.DefaultNamespace))
	case st.Apply != nil:
		return fmt.Sprintf("apply %d manifest source(s)", len(st.Apply.Manifests))
	case st.Delete != nil:
		d := st.Delete
		switch {
		case d.Release != "":
			return "uninstall release " + d.Release
		case d.Resource != "":
			return "delete " + d.Resource
		}
		return fmt.Sprintf("delete what %d manifest source(s) define", len(d.Manifests))
	case st.Patch != nil:
		return fmt.Sprintf("%s patch %s", or(st.Patch.Type, spec.PatchStrategic), st.Patch.Target)
	case st.Wait != nil:
		return fmt.Sprintf("wait for %s on %s", st.Wait.For, st.Wait.On)
	case st.Rollout != nil:
		if st.Rollout.Restart != "" {
			return "restart " + st.Rollout.Restart
		}
		return "wait for the rollout of " + st.Rollout.Status
	case st.Job != nil:
		return "run job with image " + st.Job.Image + " " + strings.Join(st.Job.Command, " ")
	}
	return ""
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
