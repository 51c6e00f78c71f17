package helmfile

import (
	"fmt"
	"os"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// references keeps environment variables references: a variable naming a
// directory (ROOT_DIR) has its paths already written relative to the
// spec; wherever else a variable's value landed in the spec it becomes
// ${NAME}, declared in vars: with the helmfile's default or as required
// (in name order).
func (c *converter) references() {
	probes, probed := c.probe()
	for _, e := range c.r.vars() {
		val := e.value
		if !e.set && e.hasDef {
			val = e.def
		}
		if e.placeholder {
			val = unsetEnv(e.name)
		}
		isDir := isDirValue(val)
		pv := probes[e.name] // "": the text match stands
		repoPass := c.authPassword(val)
		secret := (e.secret() || repoPass) && !isDir
		used, inAuth := false, false
		if len(val) >= 3 && val != "true" && val != "false" {
			used, inAuth = c.replaceRefs(val, "${"+e.name+"}", pv, probed, isDir, e.placeholder || secret)
		}
		if isDir && !used {
			c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
				Why: "the paths under it (" + val + ") are written relative to the spec, so the spec works on any checkout without it"})
			continue
		}
		if !used && !e.required {
			continue
		}
		if e.placeholder && used {
			c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
				Why: "not set while importing: written as ${" + e.name + "}, a required variable the run must set"})
		}
		if e.required && !used {
			// requiredEnv read only to build paths or to decide the
			// rendering: nothing in the spec refers to it.
			continue
		}
		// A requiredEnv stays required whatever default another template's
		// env gives it: helmfile refuses to render without it (trial 46n's O1b).
		// auth: needs both fields: unset, the run would fail on an empty one.
		v := &importer.Var{Name: e.name, Required: e.required || inAuth, From: importer.Loc{File: c.top},
			Description: "the helmfile's " + e.name + " (set KHOOK_VAR_" + e.name + " or --set " + e.name + "=...)"}
		switch {
		case secret:
			// Only from KHOOK_SECRET_NAME, never a default in the spec;
			// required when read with requiredEnv, which helmfile refuses
			// to render without (trial 46p's D5): unset, khook would deploy "".
			v.Secret = true
			v.Description = "the helmfile's " + e.name + ", a secret (set KHOOK_SECRET_" + e.name + ")"
			if !importer.SecretLooking(e.name) && !repoPass {
				c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
					Why: "its value holds a URL's password (user:password@host): written as the secret variable " + e.name + " (KHOOK_SECRET_" + e.name + "), never its value"})
			}
			if e.hasDef {
				// unset, helmfile takes the default, khook would render "":
				// the run must set it, so the spec says so (trial 46zt, winguse)
				v.Required = true
				c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
					Why: "a secret: written as a secret variable, without the helmfile's default, which the run must set (KHOOK_SECRET_" + e.name + ")"})
			}
		case !v.Required:
			d := e.def
			v.Default = &d
		case e.hasDef:
			c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
				Why: fmt.Sprintf("required without the default %q a template gives it with env: the helmfile also reads it with requiredEnv, and helmfile refuses to run when it is unset", e.def)})
		}
		c.res.Vars = append(c.res.Vars, v)
	}
	c.authRefs()
	c.secretReads()
	c.renderedFromEnv()
	for _, v := range c.hookVars {
		if !declared(c.res.Vars, v.Name) {
			c.res.Vars = append(c.res.Vars, v)
		}
	}
	sort.Slice(c.res.Vars, func(i, j int) bool { return c.res.Vars[i].Name < c.res.Vars[j].Name })
}

// replaceRefs writes ref wherever val came from the variable in the
// steps' values, namespaces and credentials: where the probe (pv, probed)
// puts it, else where the text matches; sub also inside longer strings
// ("Bearer …"). used: some place took it; inAuth: a credential did.
func (c *converter) replaceRefs(val, ref, pv string, probed []*rel, isDir, sub bool) (used, inAuth bool) {
	for i, r := range c.rels {
		for j, st := range r.steps() {
			if st.Helm == nil {
				continue
			}
			var ph *importer.OutHelm // the probe's: where the variable lands
			var pvals any
			if pv != "" {
				ph = probed[i].steps()[j].Helm
				pvals = ph.Values
				if st == r.step {
					// merged: a value the probe's own rendering moved into a
					// values file is still where helm reads it
					pvals = probed[i].out.Resolved.Values
				}
			}
			switch {
			case st.Helm.Values == nil:
			case ph != nil:
				st.Helm.Values = replaceGuided(st.Helm.Values, pvals, val, pv, ref, sub, &used).(map[string]any)
			default:
				st.Helm.Values = replaceIn(st.Helm.Values, val, ref, isDir, &used).(map[string]any)
				if sub {
					st.Helm.Values = replaceSub(st.Helm.Values, val, ref, &used).(map[string]any)
				}
			}
			_, piped := readsEnv(r.rawField("namespace"), strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}"))
			if st.Helm.Namespace == val && (ph == nil || strings.Contains(ph.Namespace, pv)) && !piped {
				st.Helm.Namespace, used = ref, true
			}
			if au := st.Helm.Auth; au != nil {
				if au.Username == val {
					au.Username, used, inAuth = ref, true, true
				}
				if au.Password == val {
					au.Password, used, inAuth = ref, true, true
				}
			}
		}
	}
	return used, inAuth
}

// isDirValue: val is an absolute path of a directory (ROOT_DIR), whose
// paths are written relative to the spec.
func isDirValue(val string) bool {
	st, err := os.Stat(val)
	return err == nil && st.IsDir() && strings.HasPrefix(val, "/")
}

// probe converts the helmfile once more with each variable whose value
// the spec may hold set to a value no template gives (probeValue): where
// that value lands, and only there, the import's value came from the
// variable. A namespace "suite" equal to SUITE_GRIST_ORG's default is a
// literal (trial 46zg's D1). Nil when the second conversion fails or its
// releases are others (a condition on a variable): the text match
// stands. It runs no exec (AllowExec off: an exec is never run twice).
func (c *converter) probe() (map[string]string, []*rel) {
	probes := map[string]string{}
	for _, e := range c.r.vars() {
		val := e.value
		if !e.set && e.hasDef {
			val = e.def
		}
		if !e.placeholder && len(val) >= 3 && val != "true" && val != "false" && !isDirValue(val) {
			probes[e.name] = probeValue(e.name)
		}
	}
	if len(probes) == 0 || c.in[1] == "" {
		return nil, nil
	}
	opts := c.opts
	lookup := opts.Env
	if lookup == nil {
		lookup = os.LookupEnv
	}
	opts.Env = func(n string) (string, bool) {
		if v, ok := probes[n]; ok {
			return v, true
		}
		return lookup(n)
	}
	opts.AllowExec, opts.Check = false, nil
	pc, _, err := convert(c.in[0], c.in[1], opts)
	if err != nil || len(pc.rels) != len(c.rels) {
		return nil, nil
	}
	for i, r := range c.rels {
		if pc.rels[i].out.Resolved.Name != r.out.Resolved.Name || len(pc.rels[i].steps()) != len(r.steps()) {
			return nil, nil
		}
		for j, st := range r.steps() {
			if (st.Helm == nil) != (pc.rels[i].steps()[j].Helm == nil) {
				return nil, nil
			}
		}
	}
	return probes, pc.rels
}

// probeValue is NAME's value in probe: a DNS label, so that a namespace
// or a name made of it still converts.
func probeValue(name string) string {
	v := "khook-probe-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, name)
	if len(v) > 63 {
		v = v[:63]
	}
	return v
}

// replaceGuided is replaceIn (replaceSub with sub) only where probe, the
// same values converted with the variable at pv, holds pv.
func replaceGuided(v, probe any, val, pv, ref string, sub bool, used *bool) any {
	switch t := v.(type) {
	case map[string]any:
		pm, ok := probe.(map[string]any)
		if !ok {
			break // no guide here: the text match stands
		}
		for k, x := range t {
			p, ok := pm[k]
			if !ok {
				// a key made of a variable (systemuser: under .id): no guide
				t[k] = replaceText(x, val, ref, sub, used)
				continue
			}
			t[k] = replaceGuided(x, p, val, pv, ref, sub, used)
		}
		return t
	case []any:
		pl, ok := probe.([]any)
		if !ok || len(pl) != len(t) {
			break
		}
		for i, x := range t {
			t[i] = replaceGuided(x, pl[i], val, pv, ref, sub, used)
		}
		return t
	case string:
		if ps, _ := probe.(string); !strings.Contains(ps, pv) {
			return v
		}
		return replaceText(t, val, ref, sub, used)
	default:
		return v
	}
	return replaceText(v, val, ref, sub, used)
}

// replaceText is the text match: replaceIn, and with sub replaceSub.
func replaceText(v any, val, ref string, sub bool, used *bool) any {
	v = replaceIn(v, val, ref, false, used)
	if sub {
		v = replaceSub(v, val, ref, used)
	}
	return v
}

// replaceIn replaces val by ref in every string of v: a whole string, or,
// for a directory path, as a prefix.
func replaceIn(v any, val, ref string, prefix bool, used *bool) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = replaceIn(x, val, ref, prefix, used)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = replaceIn(x, val, ref, prefix, used)
		}
		return t
	case string:
		if t == val && !plainString(t) {
			// "8080" stays a string: ${PORT} substituted would read as a
			// number (trial 46n's zen-watcher annotation)
			*used = true
			return strings.TrimSuffix(ref, "}") + "|toJson}"
		}
		if t == val || (prefix && strings.HasPrefix(t, val+"/")) {
			*used = true
			return ref + strings.TrimPrefix(t, val)
		}
	}
	return v
}

// plainString: s, written as a plain YAML scalar, reads back as the
// string s (not 8080, true or null).
func plainString(s string) bool {
	var back any
	return yaml.Unmarshal([]byte(s), &back) == nil && back == s
}

// replaceSub replaces val by ref inside every string of v.
func replaceSub(v any, val, ref string, used *bool) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = replaceSub(x, val, ref, used)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = replaceSub(x, val, ref, used)
		}
		return t
	case string:
		if strings.Contains(t, val) {
			*used = true
			return strings.ReplaceAll(t, val, ref)
		}
	}
	return v
}

func declared(vars []*importer.Var, name string) bool {
	for _, v := range vars {
		if v.Name == name {
			return true
		}
	}
	return false
}

// authUse is a step that installs from a repository with credentials.
type authUse struct {
	h    *importer.OutHelm
	repo string
	at   importer.Loc
}

// auth gives h the credentials of repository name, which helmfile logs in
// with before installing: written as ${VARIABLES} by authRefs.
func (c *converter) auth(h *importer.OutHelm, name string, repo repository) {
	if repo.line == 0 {
		return
	}
	h.Auth = &importer.OutAuth{Username: repo.user, Password: repo.pass}
	at := importer.Loc{File: repo.file, Line: repo.line}
	for _, a := range c.auths {
		if a.at == at {
			c.auths = append(c.auths, authUse{h: h, repo: name, at: at})
			return
		}
	}
	c.auths = append(c.auths, authUse{h: h, repo: name, at: at})
	c.res.Info = append(c.res.Info, Note{Loc: at, What: "repository " + name + " credentials",
		Why: "auth: on each step that installs from it, as helmfile logs in to it first; the password is a secret variable, never its value"})
}

// ociAuth gives an oci:// chart the credentials of the OCI repository of
// its registry: helmfile's registry login holds for the whole host.
func (c *converter) ociAuth(r *rel, h *importer.OutHelm) {
	host, _, _ := strings.Cut(strings.TrimPrefix(h.Chart, "oci://"), "/")
	names := make([]string, 0, len(r.st.repos))
	for name := range r.st.repos {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		repo := r.st.repos[name]
		if h2, _, _ := strings.Cut(strings.TrimPrefix(repo.url, "oci://"), "/"); repo.oci && repo.line > 0 && h2 == host {
			c.auth(h, name, repo)
			return
		}
	}
}

// authPassword says whether val is a repository's password.
func (c *converter) authPassword(val string) bool {
	for _, a := range c.auths {
		if a.h.Auth.Password == val {
			return true
		}
	}
	return false
}

// authRefs writes each credential references() did not make a ${NAME}
// (written in the helmfile, or computed) as a secret variable named after
// its repository; a username is kept unless it is the password too.
func (c *converter) authRefs() {
	for _, a := range c.auths {
		au := a.h.Auth
		if isRef(au.Password) {
			continue
		}
		name := "HELM_REPO_" + varName(a.repo) + "_PASSWORD"
		if len(au.Password) >= 4 {
			c.opts.Redactor.Add(au.Password)
		}
		if au.Username == au.Password {
			au.Username = "${" + name + "}"
		}
		au.Password = "${" + name + "}"
		if declared(c.res.Vars, name) {
			continue
		}
		c.res.Vars = append(c.res.Vars, &importer.Var{Name: name, Secret: true, Required: true, From: a.at,
			Description: "the password of helm repository " + a.repo + " (set KHOOK_SECRET_" + name + ")"})
		c.res.Info = append(c.res.Info, Note{Loc: a.at, What: "repository " + a.repo + " password",
			Why: "written as the secret variable " + name + " (KHOOK_SECRET_" + name + "), never its value"})
	}
}

func isRef(s string) bool { return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") }

// hookLogins gives each release that installs an oci:// chart from a
// registry a hook logs in to (`helm registry login`) that login's auth:,
// unless its repository gave it one: helm keeps the login for the host.
func (c *converter) hookLogins() {
	for _, r := range c.rels {
		for _, st := range r.steps() {
			h := st.Helm
			if h == nil || h.Auth != nil || !strings.HasPrefix(h.Chart, "oci://") {
				continue
			}
			host, _, _ := strings.Cut(strings.TrimPrefix(h.Chart, "oci://"), "/")
			for _, l := range c.logins {
				if l.Host == host {
					au := l.Auth
					h.Auth = &au
					c.infof(r, "chart", "chart "+h.Chart, "auth: of the registry login at "+l.Loc.String()+", which helm keeps for "+host)
					break
				}
			}
		}
	}
}
