package spec

import (
	"strconv"
	"time"

	"github.com/khook/khook/redact"
)

// applyDefaults fills effective values: per-step scheduling fields from
// defaults: or the built-ins, and the per-type defaults the DSL documents.
// Written values are never overwritten; "written" is told by Positions.
func applyDefaults(s *Spec) {
	written := func(path string) bool { _, ok := s.Positions[path]; return ok }
	if s.State != nil {
		if !written("state.enabled") {
			s.State.Enabled = true
		}
		if s.State.Namespace == "" {
			s.State.Namespace = DefaultNamespace
		}
		if s.State.Name == "" && s.Metadata.Name != "" {
			s.State.Name = "khook-state-" + s.Metadata.Name
		}
	}
	d := s.Defaults
	for i, st := range s.Steps {
		if st == nil {
			st = &Step{}
			s.Steps[i] = st
		}
		st.Index = i
		st.Path = stepPath(i)
		if st.Timeout == 0 {
			st.Timeout = orDuration(d.Timeout, DefaultTimeout)
		}
		if st.RetryDelay == 0 {
			st.RetryDelay = orDuration(d.RetryDelay, DefaultRetryDelay)
		}
		if !written(st.Path+".retries") && d.Retries != nil {
			st.Retries = *d.Retries
		}
		if st.OnError == "" {
			st.OnError = d.OnError
		}
		if st.OnError == "" {
			st.OnError = OnErrorFail
		}
		if st.OnImmutable == "" && (st.Helm != nil || st.Apply != nil) {
			st.OnImmutable = d.OnImmutable
		}
		if st.Helm != nil || st.Apply != nil {
			st.Ignored = s.ignoreFor(st)
		}
		switch {
		case st.Helm != nil:
			h := st.Helm
			if h.Release == "" {
				h.Release = st.Name
			}
			if h.Namespace == "" {
				h.Namespace = DefaultNamespace
			}
			// Inline versions move to Version; ParseChart keeps oci digests.
			if ref := ParseChart(h.Chart); ref.Kind != ChartLocal && ref.Version != "" && h.Version == "" {
				h.Chart, h.Version = ref.Name, ref.Version
			}
		case st.Patch != nil:
			if st.Patch.Type == "" {
				st.Patch.Type = PatchStrategic
			}
			if st.Patch.Namespace == "" {
				st.Patch.Namespace = DefaultNamespace
			}
		case st.Job != nil:
			if st.Job.Namespace == "" {
				st.Job.Namespace = DefaultNamespace
			}
		case st.Delete != nil && st.Delete.Release != "":
			if st.Delete.Namespace == "" {
				st.Delete.Namespace = DefaultNamespace
			}
		}
	}
}

func orDuration(d Duration, builtin time.Duration) Duration {
	if d != 0 {
		return d
	}
	return Duration(builtin)
}

func stepPath(i int) string { return "steps." + strconv.Itoa(i) }

// registerCredentials hands every credential written in the spec to the
// redactor: URL userinfo passwords and auth.password values.
func registerCredentials(s *Spec, red *redact.Redactor) {
	addURL := func(u string) {
		if pw := urlPassword(u); pw != "" {
			red.Add(pw)
		}
	}
	addSources := func(srcs []Source) {
		for _, src := range srcs {
			addURL(src.URL)
		}
	}
	for _, st := range s.Steps {
		if st == nil {
			continue
		}
		if h := st.Helm; h != nil {
			addURL(h.Repo)
			addURL(h.Chart)
			if h.Auth != nil {
				red.Add(h.Auth.Password)
			}
			addSources(h.ValuesFrom)
		}
		if st.Apply != nil {
			addSources(st.Apply.Manifests)
		}
		if st.Delete != nil {
			addSources(st.Delete.Manifests)
		}
	}
}

// NamespaceOrDefault is a step's effective namespace: ns, else the DSL's
// default. applyDefaults writes it into the helm, patch, job and
// delete.release steps; apply, wait and delete (manifests, resource) keep
// the field as written, because the state record's step hash covers it,
// and the runner asks here instead of keeping a default of its own.
func NamespaceOrDefault(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}
