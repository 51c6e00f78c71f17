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
	for _, e := range c.r.vars() {
		val := e.value
		if !e.set && e.hasDef {
			val = e.def
		}
		if e.placeholder {
			val = unsetEnv(e.name)
		}
		isDir := false
		if st, err := os.Stat(val); err == nil && st.IsDir() && strings.HasPrefix(val, "/") {
			isDir = true
		}
		secret := e.secret() && !isDir
		used := false
		if len(val) >= 3 && val != "true" && val != "false" {
			ref := "${" + e.name + "}"
			for _, r := range c.rels {
				for _, st := range r.steps() {
					if st.Helm != nil {
						if st.Helm.Values != nil {
							st.Helm.Values = replaceIn(st.Helm.Values, val, ref, isDir, &used).(map[string]any)
							if e.placeholder || secret { // also inside a longer string ("Bearer …")
								st.Helm.Values = replaceSub(st.Helm.Values, val, ref, &used).(map[string]any)
							}
						}
						if st.Helm.Namespace == val {
							st.Helm.Namespace, used = ref, true
						}
					}
				}
			}
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
		v := &importer.Var{Name: e.name, Required: e.required, From: importer.Loc{File: c.top},
			Description: "the helmfile's " + e.name + " (set KHOOK_VAR_" + e.name + " or --set " + e.name + "=...)"}
		switch {
		case secret:
			// Only from KHOOK_SECRET_NAME, never a default in the spec;
			// required when read with requiredEnv, which helmfile refuses
			// to render without (trial 46p's D5): unset, khook would deploy "".
			v.Secret = true
			v.Description = "the helmfile's " + e.name + ", a secret (set KHOOK_SECRET_" + e.name + ")"
			if !importer.SecretLooking(e.name) {
				c.res.Info = append(c.res.Info, Note{Loc: importer.Loc{File: c.top}, What: "environment variable " + e.name,
					Why: "its value holds a URL's password (user:password@host): written as the secret variable " + e.name + " (KHOOK_SECRET_" + e.name + "), never its value"})
			}
			if e.hasDef {
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
	c.secretReads()
	for _, v := range c.hookVars {
		if !declared(c.res.Vars, v.Name) {
			c.res.Vars = append(c.res.Vars, v)
		}
	}
	sort.Slice(c.res.Vars, func(i, j int) bool { return c.res.Vars[i].Name < c.res.Vars[j].Name })
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
