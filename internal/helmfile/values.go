package helmfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// values carries values files, .gotmpl values, inline values, secrets and
// set/setString over, in helm's order: -f files (inline maps among them),
// then secrets, then --set.
func (c *converter) values(r *rel, h *importer.OutHelm) error {
	entries, _ := r.m["values"].([]any)
	secrets, _ := r.m["secrets"].([]any)
	// Inline maps after the last file go to values:, the rest stay in order.
	lastFile := -1
	for i, e := range entries {
		if _, ok := e.(string); ok {
			lastFile = i
		}
	}
	var trailing map[string]any
	for i, e := range entries {
		switch v := e.(type) {
		case map[string]any:
			r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(v))
			if i > lastFile && len(secrets) == 0 {
				trailing = mergeValues(trailing, deepCopy(v))
				continue
			}
			c.generated(r, h, source{r.st.file, r.st.src}, fmt.Sprintf("values[%d] (inline)", i), v, "inline values of release "+r.out.Resolved.Name+" in "+r.st.file+", kept as a file so that later values files still override them as in helmfile")
		case string:
			if err := c.valuesFile(r, h, i, v); err != nil {
				return err
			}
		default:
			c.note(r, "values", fmt.Sprintf("values[%d]", i), "neither a file nor a map")
		}
	}
	if len(entries) > 0 {
		r.out.Carried = append(r.out.Carried, "values")
	}
	for i, e := range secrets {
		p, ok := e.(string)
		if !ok {
			c.note(r, "secrets", fmt.Sprintf("secrets[%d]", i), "not a file path")
			continue
		}
		ap := abs(r.st.dir, p)
		if _, err := os.Stat(ap); err != nil {
			// helmfile reads a secrets entry with the release's own
			// missingFileHandler only, not the helmfile's.
			h := str(r.m["missingFileHandler"])
			skip, bad := skipMissing(h)
			if skip {
				r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("secrets")}, What: "release " + r.out.Resolved.Name + ": secrets " + p, Why: "missing, skipped as the release's missingFileHandler " + h + " says"})
				continue
			}
			return &InputError{File: r.st.file, Line: r.lineOf("secrets"), Msg: fmt.Sprintf("release %s: the secrets file %s cannot be read: %s%s", r.out.Resolved.Name, c.r.asWritten(p), pathErr(err), bad)}
		}
		h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(ap)})
		r.out.Resolved.SecretFiles = append(r.out.Resolved.SecretFiles, c.rel(ap))
	}
	if len(secrets) > 0 {
		r.out.Carried = append(r.out.Carried, "secrets (sops values files, decrypted by khook)")
	}
	base := r.out.Resolved.Values
	set := map[string]any{}
	var files []map[string]any
	if l, ok := r.m["set"].([]any); ok {
		files = c.set(r, "set", l, false, set)
		r.out.Carried = append(r.out.Carried, "set")
	}
	if l, ok := r.m["setString"].([]any); ok {
		c.set(r, "setString", l, true, set)
		r.out.Carried = append(r.out.Carried, "setString")
	}
	setOverValues(r, base, set)
	c.setFiles(r, files, set)
	set = stringKeys(set).(map[string]any)
	r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(set))
	if trailing != nil || len(set) > 0 {
		h.Values = mergeValues(trailing, set)
	}
	return nil
}

// valuesFile carries one values: file entry: a plain file as valuesFrom;
// a .gotmpl one as valuesFrom {file, path} when it takes values from a
// path inside a YAML file (the Flux HelmRelease pattern), else rendered
// into a file beside the spec.
func (c *converter) valuesFile(r *rel, h *importer.OutHelm, i int, p string) error {
	ap := abs(r.st.dir, p)
	data, err := os.ReadFile(ap)
	if err != nil {
		skip, bad := skipMissing(c.missingHandler(r))
		if skip {
			r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: "release " + r.out.Resolved.Name + ": values " + p, Why: "missing, skipped as helmfile's missingFileHandler " + c.missingHandler(r) + " says"})
			return nil
		}
		return &InputError{File: r.st.file, Line: c.findLine(r.st, filepath.Base(p), r.lineOf("values")), Msg: fmt.Sprintf("release %s: the values file %s cannot be read: %s%s", r.out.Resolved.Name, c.r.asWritten(p), pathErr(err), bad)}
	}
	if filepath.Ext(ap) != ".gotmpl" {
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil {
			return &InputError{File: c.l.display(ap), Line: yamlErrLine(err), Msg: "the values file of release " + r.out.Resolved.Name + " is not a YAML map: " + yamlErrMsg(err)}
		}
		r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, stringKeys(m).(map[string]any))
		h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(ap)})
		return nil
	}
	mark, probed, used := len(c.r.reads), len(c.r.probes), len(c.r.uses)
	text, err := c.r.render(c.l.display(ap), 0, filepath.Dir(ap), string(data), releaseData(r.st, r.m))
	if err != nil {
		return r.st.undefinedEnv(err)
	}
	c.volatileRelease(r, used, c.l.display(ap))
	for _, p := range c.r.probes[probed:] {
		// {{ if isFile "my-dev.yaml" }}{{ readFile … }}: a local override
		// helmfile reads whenever it is there (trial 46y's D3)
		state := "absent"
		if _, err := os.Stat(p); err == nil {
			state = "there"
		}
		r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: "release " + r.out.Resolved.Name + ": values " + c.l.display(ap),
			Why: "it looks for " + c.l.display(p) + " each time helmfile runs; rendered once, with it " + state + " at import: import again when it changes"})
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		return &InputError{File: c.l.display(ap), Line: yamlErrLine(err), Msg: "after rendering for release " + r.out.Resolved.Name + " it is not a YAML map of values: " + yamlErrMsg(err)}
	}
	if m == nil {
		m = map[string]any{}
	}
	m = stringKeys(m).(map[string]any)
	r.out.Resolved.Values = mergeValues(r.out.Resolved.Values, deepCopy(m))
	for _, rd := range c.r.reads[mark:] {
		for _, g := range rd.gets {
			if deepEqualValues(g.val, m) {
				h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(rd.path), Path: g.path})
				r.out.Carried = append(r.out.Carried, fmt.Sprintf("values[%d] %s as valuesFrom {file: %s, path: %s}", i, p, c.rel(rd.path), g.path))
				return nil
			}
		}
		if path, ok := findPath(rd.obj, m, ""); ok {
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: c.rel(rd.path), Path: path})
			r.out.Carried = append(r.out.Carried, fmt.Sprintf("values[%d] %s as valuesFrom {file: %s, path: %s}", i, p, c.rel(rd.path), path))
			return nil
		}
	}
	c.generated(r, h, source{c.l.display(ap), string(data)}, fmt.Sprintf("values[%d] %s", i, p), m, "the values template "+c.l.display(ap)+" rendered for release "+r.out.Resolved.Name+" (environment "+r.st.envName+"); edit the template and import again")
	var with []string
	if len(c.r.env) > 0 {
		with = append(with, "this checkout's environment variables")
	}
	var files []string
	for _, rd := range c.r.reads[mark:] {
		if f := c.l.display(rd.path); !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		// readFile of dashboards, an HTML page (trial 46zg's N6): helmfile
		// reads them on every run, the spec holds their text of today
		with = append(with, "the text of "+strings.Join(files, ", ")+" as it is at import (an edit of it reaches helmfile, not the spec, until you import again)")
	}
	if len(with) > 0 {
		r.out.Info = append(r.out.Info, Note{Loc: importer.Loc{File: r.st.file, Line: r.lineOf("values")}, What: "release " + r.out.Resolved.Name + ": values " + c.l.display(ap),
			Why: "rendered once into " + h.ValuesFrom[len(h.ValuesFrom)-1].File + " with " + strings.Join(with, " and ")})
	}
	return nil
}

// generated writes values into a file beside the spec that says where
// they came from (src: the file and text they were written in).
func (c *converter) generated(r *rel, h *importer.OutHelm, src source, what string, v map[string]any, from string) {
	name := fmt.Sprintf("%s.values-%d.yaml", r.step.Name, len(h.ValuesFrom)+1)
	if c.genSrc == nil {
		c.genSrc = map[string]source{}
	}
	c.genSrc[name] = src
	body, _ := toYaml(v)
	data := []byte("# Generated by khook import helmfile from " + from + ".\n" + body)
	c.files = append(c.files, File{Path: name, Data: data})
	h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: "./" + name})
	r.out.Carried = append(r.out.Carried, what+" as "+name)
}

// skipMissing is helmfile's missingFileHandler for a file that is not
// there: unset or Error refuses, Warn, Info and Debug skip it; any other
// value helmfile refuses too (bad says so, to end the refusal's sentence).
func skipMissing(handler string) (skip bool, bad string) {
	switch handler {
	case "", "Error":
		return false, ""
	case "Warn", "Info", "Debug":
		return true, ""
	}
	return false, fmt.Sprintf(" (missingFileHandler %q is none of Error, Warn, Info and Debug, so helmfile refuses it too)", handler)
}
