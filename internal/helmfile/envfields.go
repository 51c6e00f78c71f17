package helmfile

import (
	"regexp"
	"strings"
)

// A release's name, or its namespace through a function
// ('{{ requiredEnv "NAMESPACE" | replace "/" "-" }}'), rendered from an
// environment variable cannot be a ${VAR} of the spec: the first is the
// step's identity, the second would drop the function (a NAMESPACE with a
// "/" becomes another namespace). Each is written as its value at import
// and said, never silently frozen (trial 46zq's D2: a CI sets both per
// branch).

// rawField is the text of key's line in the release's own file, "" when
// the release does not write key itself.
func (r *rel) rawField(key string) string {
	l, ok := r.lines[key]
	if !ok || l <= 0 {
		return ""
	}
	lines := strings.Split(r.st.src, "\n")
	if l > len(lines) {
		return ""
	}
	return lines[l-1]
}

// readsEnv: text reads the environment variable name (env, requiredEnv),
// piped: through a function after it.
func readsEnv(text, name string) (reads, piped bool) {
	m := regexp.MustCompile(`(?:requiredEnv|env)\s+"` + regexp.QuoteMeta(name) + `"\s*\)?\s*(\|)?`).FindStringSubmatch(text)
	return m != nil, m != nil && m[1] != ""
}

// renderedFromEnv says each release name and each piped namespace that an
// environment variable rendered.
func (c *converter) renderedFromEnv() {
	for _, r := range c.rels {
		for _, e := range c.r.vars() {
			if reads, _ := readsEnv(r.rawField("name"), e.name); reads {
				c.infof(r, "name", "name", "rendered from the environment variable "+e.name+" once, at import: written as "+r.out.Resolved.Name+" (a release's name is its step's identity, no variable); when "+e.name+" names another release, import again")
			}
			if _, piped := readsEnv(r.rawField("namespace"), e.name); piped && r.step != nil && r.step.Helm != nil && !strings.Contains(r.step.Helm.Namespace, "${") {
				c.infof(r, "namespace", "namespace", "rendered from the environment variable "+e.name+" through a template function once, at import: written as "+r.step.Helm.Namespace+"; when "+e.name+" changes, import again")
			}
		}
	}
}
