package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Each step type accepts exactly one skipIf predicate.
var skipIfValues = map[string]string{
	TypeHelm:  "installed",
	TypeApply: "exists",
	TypeJob:   "succeeded",
}

func (v *validator) skipIf(path, typ, got string) {
	if want := skipIfValues[typ]; got != "" && got != want {
		v.errorf(path+".skipIf", "", "%s steps accept only skipIf: %s, got %q", typ, want, got)
	}
}

func (v *validator) namespace(path, ns string) {
	if ns == "" {
		return
	}
	if msg := checkLabel(ns); msg != "" {
		v.errorf(path, "", "namespace %s", msg)
	}
}

// required reports an empty field, unless the decoder already did.
func (v *validator) required(path, val, hint string) bool {
	switch {
	case val != "":
		return true
	case v.bad[path]:
	case v.typos[path] && !v.written(path): // the did-you-mean says it
	case v.written(path):
		v.errorf(path, hint, "must not be empty")
	default:
		v.errorf(path, hint, "is required")
	}
	return false
}

func (v *validator) helm(p string, h *Helm) {
	if v.required(p+".chart", h.Chart, "write a chart name with repo:, an oci:// reference, or a local ./path") {
		v.chart(p, h)
	}
	v.skipIf(p, TypeHelm, h.SkipIf)
	switch h.CRDs {
	case "", CRDsUpgrade, CRDsCreate, CRDsSkip, CRDsOnly:
	default:
		v.errorf(p+".crds", "write upgrade (the default), create, skip or only", "crds: %q is not one of upgrade, create, skip, only", h.CRDs)
	}
	v.namespace(p+".namespace", h.Namespace)
	if h.Release != "" {
		if msg := checkSubdomain(h.Release, maxReleaseName); msg != "" {
			hint := ""
			if !v.written(p + ".release") {
				hint = "the release is named after the step: set release: or shorten the step name"
			}
			v.errorf(p+".release", hint, "release name %s", msg)
		}
	}
	if h.Auth != nil {
		if h.Auth.Username == "" {
			v.errorf(p+".auth.username", "", "is required in an auth: block")
		}
		if h.Auth.Password == "" {
			v.errorf(p+".auth.password", "pass it as a variable: password: ${MY_TOKEN} with KHOOK_SECRET_MY_TOKEN set", "is required in an auth: block")
		}
	}
	v.sources(p+".valuesFrom", h.ValuesFrom, "file", "url", "secretKeyRef", "configMapKeyRef")
	v.postRenderers(p+".postRenderers", h.PostRenderers)
	v.verify(p+".verify", h)
}

// chart applies the chart-source rules: the chart: shape decides which of
// repo, version and auth are allowed.
func (v *validator) chart(p string, h *Helm) {
	ref := ParseChart(h.Chart)
	// Load moved an inline version to Version; a chart still carrying one means
	// both were written.
	inline := ref.Version != ""
	userinfo := false
	switch ref.Kind {
	case ChartRepo:
		if strings.Contains(ref.Name, "/") {
			v.errorf(p+".chart", "khook needs no repo names: write chart: "+ref.Name[strings.LastIndexByte(ref.Name, '/')+1:]+" with repo: <URL>",
				"%q looks like a repo-alias/chart name; a bare chart name has no \"/\"", h.Chart)
		} else if ref.Name == "" {
			v.errorf(p+".chart", "", "%q has no chart name before \":\"", h.Chart)
		}
		if inline && h.Version != "" {
			v.errorf(p+".version", "keep one of them", "the chart version is written both inline (%s) and in version:", h.Chart)
		}
		if h.Repo == "" {
			v.errorf(p+".chart", "add repo: https://... (the chart repository URL)", "the bare chart name %q needs repo:", ref.Name)
		} else if IsGitRepo(h.Repo) {
			if _, err := ParseGitRepo(h.Repo); err != nil {
				v.errorf(p+".repo", "", "the git chart repository %s %v", h.Repo, err)
			} else {
				userinfo = urlHasUserinfo(h.Repo)
			}
		} else if msg, hint := checkURL(h.Repo, "http", "https"); msg != "" {
			v.errorf(p+".repo", hint, "%s", msg)
		} else {
			userinfo = urlHasUserinfo(h.Repo)
		}
	case ChartOCI:
		if h.Repo != "" {
			v.errorf(p+".repo", "remove repo:; the oci:// reference says where the chart is", "repo: is not allowed with an oci:// chart")
		}
		// Load moved a :tag to Version; only a written version: can clash.
		if (inline || ref.Digest != "") && v.written(p+".version") {
			v.errorf(p+".version", "keep one of them", "the chart version is written both in the oci reference (%s) and in version:", h.Chart)
		}
		if msg, hint := checkURL(h.Chart, "oci"); msg != "" {
			v.errorf(p+".chart", hint, "%s", msg)
		} else {
			userinfo = urlHasUserinfo(h.Chart)
		}
	case ChartLocal:
		if h.Repo != "" {
			v.errorf(p+".repo", "remove repo:", "repo: is not allowed with a local chart path")
		}
		if h.Version != "" {
			v.errorf(p+".version", "remove version:; the local chart's Chart.yaml decides", "version: is not allowed with a local chart path")
		}
		if h.Auth != nil {
			v.errorf(p+".auth", "remove auth:", "auth: is not allowed with a local chart path")
		}
	}
	if userinfo && h.Auth != nil {
		v.errorf(p+".auth", "keep one of them", "credentials are given both in the URL and in auth:")
	}
}

// sources checks a manifests/valuesFrom list: each entry exactly one of the
// allowed keys.
func (v *validator) sources(p string, srcs []Source, allowed ...string) {
	for i, src := range srcs {
		sp := fmt.Sprintf("%s.%d", p, i)
		set := map[string]string{"inline": src.Inline, "file": src.File, "url": src.URL, "kustomize": src.Kustomize,
			"secretKeyRef": "", "configMapKeyRef": ""}
		var keys []string
		for k := range set {
			if v.written(sp + "." + k) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		hint := "each entry is exactly one of " + strings.Join(allowed, ", ")
		misspelt := false
		for k := range set {
			misspelt = misspelt || v.typos[sp+"."+k]
		}
		if len(keys) == 0 && misspelt {
			continue // the did-you-mean already says which key was meant
		}
		if len(keys) != 1 {
			v.errorf(sp, hint, "a source must have exactly one key, found %d", len(keys))
			continue
		}
		k := keys[0]
		if !contains(allowed, k) {
			v.errorf(sp+"."+k, hint, "%s: sources are not allowed here", k)
			continue
		}
		val := set[k]
		switch k {
		case "url":
			if msg, h := checkURL(val, "http", "https"); msg != "" {
				v.errorf(sp+".url", h, "%s", msg)
			}
		case "kustomize":
			if !isLocalPath(val) {
				v.errorf(sp+".kustomize", "remote bases need git, which khook does not run", "%q must be a local path starting with ./, ../ or /", val)
			}
		case "file":
			v.required(sp+".file", val, "")
		case "inline":
			v.required(sp+".inline", val, "")
		case "secretKeyRef", "configMapKeyRef":
			v.valuesRef(sp+"."+k, src.SecretKeyRef, src.ConfigMapKeyRef)
		}
		if v.written(sp + ".path") {
			switch {
			case !strings.HasSuffix(p, ".valuesFrom") || k != "file":
				v.errorf(sp+".path", "path: goes with file: in a helm step's valuesFrom", "path: is only allowed beside file: in valuesFrom")
			case src.Path == "" || strings.HasPrefix(src.Path, ".") || strings.HasSuffix(src.Path, ".") || strings.Contains(src.Path, ".."):
				v.errorf(sp+".path", "write the keys separated by dots, e.g. spec.values", "%q is not a dotted path of map keys", src.Path)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (v *validator) apply(p string, a *Apply) {
	if len(a.Manifests) == 0 {
		v.errorf(p+".manifests", "list sources: - file: ./x.yaml, - inline: |, - url: https://..., - kustomize: ./dir", "at least one manifest source is required")
	}
	v.sources(p+".manifests", a.Manifests, "inline", "file", "url", "kustomize")
	v.namespace(p+".namespace", a.Namespace)
	v.skipIf(p, TypeApply, a.SkipIf)
	if a.WaitFor != "" {
		if _, err := a.Condition(); err != nil {
			v.errorf(p+".waitFor", ApplyWaitForHint, "%v", err)
		}
	}
}

func (v *validator) delete(p string, d *Delete) {
	var forms []string
	for _, f := range []string{"manifests", "resource", "release"} {
		if v.written(p + "." + f) {
			forms = append(forms, f)
		}
	}
	hint := "delete takes exactly one of manifests:, resource: or release:"
	switch len(forms) {
	case 0:
		v.errorf(p, hint, "nothing to delete")
		return
	case 1:
	default:
		v.errorf(p+"."+forms[1], hint, "%s: and %s: cannot be combined", forms[0], forms[1])
		return
	}
	v.namespace(p+".namespace", d.Namespace)
	if d.AllNamespaces && v.written(p+".namespace") {
		v.errorf(p+".allNamespaces", "keep one of them", "namespace: and allNamespaces: true are mutually exclusive")
	}
	switch forms[0] {
	case "manifests":
		if len(d.Manifests) == 0 {
			v.errorf(p+".manifests", "", "at least one manifest source is required")
		}
		v.sources(p+".manifests", d.Manifests, "inline", "file", "url", "kustomize")
		v.notWith(p, "manifests", "selector", "fieldSelector", "allNamespaces")
	case "resource":
		if r, err := d.Object(); err != nil {
			v.errorf(p+".resource", "write a type (pods) or kind/name (daemonset/aws-node)", "%v", err)
		} else if r.Name != "" {
			v.namedWith(p, r, d.Selector, d.FieldSelector, d.AllNamespaces)
		}
	case "release":
		if msg := checkSubdomain(d.Release, maxReleaseName); msg != "" {
			v.errorf(p+".release", "", "release name %s", msg)
		}
		v.notWith(p, "release", "selector", "fieldSelector", "allNamespaces", "deleteCRDs", "deleteData")
	}
}

// namedWith reports selectors and allNamespaces next to a named object, which
// kubectl refuses too: a name already picks the object.
func (v *validator) namedWith(p string, r Resource, selector, fieldSelector string, all bool) {
	for f, set := range map[string]bool{"selector": selector != "", "fieldSelector": fieldSelector != "", "allNamespaces": all} {
		if set {
			v.errorf(p+"."+f, "use a bare type ("+r.Type+") to select objects", "%s: does not apply to the named object %s", f, r)
		}
	}
}

// notWith reports fields that do not apply to a delete form.
func (v *validator) notWith(p, form string, fields ...string) {
	for _, f := range fields {
		if v.written(p + "." + f) {
			v.errorf(p+"."+f, "remove it", "%s: does not apply to delete by %s", f, form)
		}
	}
}

func (v *validator) patch(p string, pt *Patch) {
	if v.required(p+".target", pt.Target, "write kind/name, like daemonset/aws-node") {
		if _, err := pt.Object(); err != nil {
			v.errorf(p+".target", "", "%v", err)
		}
	}
	v.namespace(p+".namespace", pt.Namespace)
	switch pt.Type {
	case PatchStrategic, PatchMerge:
		if pt.Patch == nil {
			v.errorf(p+".patch", "", "is required: the patch body")
		} else if _, ok := pt.Patch.(map[string]any); !ok {
			v.errorf(p+".patch", "a json patch is a list of operations: add type: json", "a %s patch must be a map", pt.Type)
		}
	case PatchJSON:
		ops, ok := pt.Patch.([]any)
		if !ok || len(ops) == 0 {
			v.errorf(p+".patch", "write - {op: replace, path: /spec/replicas, value: 2}", "a json patch must be a non-empty list of operations")
			return
		}
		for i, op := range ops {
			v.jsonPatchOp(fmt.Sprintf("%s.patch.%d", p, i), op)
		}
	default:
		v.errorf(p+".type", "", "must be strategic, merge or json, got %q", pt.Type)
	}
}

var jsonPatchOps = map[string][]string{
	"add": {"value"}, "remove": nil, "replace": {"value"}, "move": {"from"}, "copy": {"from"}, "test": {"value"},
}

func (v *validator) jsonPatchOp(p string, op any) {
	m, ok := op.(map[string]any)
	if !ok {
		v.errorf(p, "write {op: replace, path: /spec/replicas, value: 2}", "a json patch operation must be a map")
		return
	}
	name, _ := m["op"].(string)
	need, known := jsonPatchOps[name]
	if !known {
		v.errorf(p+".op", "", "op must be one of add, remove, replace, move, copy, test, got %v", m["op"])
	}
	if path, ok := m["path"].(string); !ok || !strings.HasPrefix(path, "/") && path != "" {
		v.errorf(p+".path", "", "path must be a JSON pointer such as /spec/replicas")
	}
	for _, f := range need {
		if _, ok := m[f]; !ok {
			v.errorf(p, "", "a %s operation needs %s", name, f)
		}
	}
}

func (v *validator) wait(p string, w *Wait) {
	if v.required(p+".for", w.For, WaitForHint) {
		if _, err := w.Condition(); err != nil {
			v.errorf(p+".for", WaitForHint, "%v", err)
		}
	}
	if v.required(p+".on", w.On, "write a type (pods) or kind/name (deployment/coredns)") {
		if r, err := w.Object(); err != nil {
			v.errorf(p+".on", "", "%v", err)
		} else if r.Name != "" {
			v.namedWith(p, r, w.Selector, w.FieldSelector, w.AllNamespaces)
		}
	}
	v.namespace(p+".namespace", w.Namespace)
	if w.AllNamespaces && v.written(p+".namespace") {
		v.errorf(p+".allNamespaces", "keep one of them", "namespace: and allNamespaces: true are mutually exclusive")
	}
}

func (v *validator) rollout(p string, r *Rollout) {
	restart, status := v.written(p+".restart"), v.written(p+".status")
	switch {
	case restart && status:
		v.errorf(p+".status", "use two steps to restart and then wait", "restart: and status: are mutually exclusive")
	case !restart && !status:
		v.errorf(p, "write restart: deployment/x or status: deployment/x", "needs one of restart: or status:")
	default:
		f, val := "restart", r.Restart
		if status {
			f, val = "status", r.Status
		}
		res, err := r.Object()
		if err != nil {
			v.errorf(p+"."+f, "", "%v", err)
		} else if rolloutKinds[strings.ToLower(res.Type)] == "" {
			v.errorf(p+"."+f, "rollout handles deployment/x, daemonset/x and statefulset/x", "%q is not a deployment, daemonset or statefulset", val)
		}
	}
	if v.required(p+".namespace", r.Namespace, "rollout steps name their namespace explicitly") {
		v.namespace(p+".namespace", r.Namespace)
	}
}

func (v *validator) job(p string, j *Job) {
	v.required(p+".image", j.Image, "")
	v.namespace(p+".namespace", j.Namespace)
	v.skipIf(p, TypeJob, j.SkipIf)
	if j.ServiceAccount != "" {
		if msg := checkSubdomain(j.ServiceAccount, 253); msg != "" {
			v.errorf(p+".serviceAccount", "", "%s", msg)
		}
	}
	for name := range j.Env {
		if !envVarName.MatchString(name) {
			v.errorf(p+".env."+name, "", "%q is not a valid environment variable name", name)
		}
	}
	v.jobSources(p, j)
}

// valuesRef checks a valuesFrom secretKeyRef or configMapKeyRef.
func (v *validator) valuesRef(p string, refs ...*ValuesRef) {
	for _, r := range refs {
		if r == nil {
			continue
		}
		v.objectName(p+".name", r.Name)
		if r.Key != "" && !configKey.MatchString(r.Key) {
			v.errorf(p+".key", "", "%q is not a valid Secret or ConfigMap key (letters, digits, -, _ and .)", r.Key)
		}
		if r.Namespace != "" && !dnsLabelRE.MatchString(r.Namespace) {
			v.errorf(p+".namespace", "a namespace is a DNS label", "%q is not a namespace name", r.Namespace)
		}
		if r.TargetPath != "" && (strings.HasPrefix(r.TargetPath, ".") || strings.HasSuffix(r.TargetPath, ".") || strings.ContainsAny(r.TargetPath, "= \t")) {
			v.errorf(p+".targetPath", "a dotted path as helm --set takes it: a.b[0].c", "%q is not a values path", r.TargetPath)
		}
	}
}
