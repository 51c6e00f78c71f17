package helmfile

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

// fields maps the release's other fields (and helmDefaults) or says why not.
func (c *converter) fields(r *rel, h *importer.OutHelm) {
	get := func(k string) (any, bool, bool) { // value, set, from helmDefaults
		if v, ok := r.m[k]; ok {
			return v, true, false
		}
		if n, ok := r.st.defaults[k]; ok {
			var v any
			_ = n.Decode(&v)
			return v, true, true
		}
		return nil, false, false
	}
	b := func(v any) bool { return v == true || str(v) == "true" }
	if v, ok, _ := get("wait"); ok {
		h.Wait = b(v)
		r.out.Carried = append(r.out.Carried, "wait")
	}
	if v, ok := r.m["waitTemplate"]; ok {
		h.Wait = b(strings.TrimSpace(str(v)))
	}
	// rollbackOnFailure is Helm 4's name for atomic
	for _, k := range []string{"atomic", "rollbackOnFailure"} {
		if v, ok, _ := get(k); ok {
			h.Atomic = h.Atomic || b(v)
			r.out.Carried = append(r.out.Carried, k)
		}
	}
	for k, to := range map[string]*bool{"takeOwnership": &h.TakeOwnership, "skipSchemaValidation": &h.SkipSchemaValidation} {
		if v, ok, _ := get(k); ok {
			*to = b(v)
			r.out.Carried = append(r.out.Carried, k)
		}
	}
	createNS := true
	if v, ok, _ := get("createNamespace"); ok {
		createNS = b(v)
	}
	h.CreateNamespace = createNS && h.Namespace != ""
	if v, ok, _ := get("timeout"); ok {
		if n, err := strconv.Atoi(str(v)); err == nil && n > 0 {
			r.step.Timeout = strconv.Itoa(n) + "s"
			r.out.Carried = append(r.out.Carried, "timeout")
		}
	}
	c.labels(r)
	if v, ok, _ := get("force"); ok && b(v) {
		r.step.OnImmutable = "recreate"
		c.infof(r, "force", "force", "helm --force replaces objects it cannot update; khook recreates only objects whose immutable fields changed (onImmutable: recreate)")
	}
	for _, k := range sortedKeys(r.m) {
		why, known := fieldWhy[k]
		switch {
		case known && why != "":
			c.infof(r, k, k, why)
		case known:
		case notCarriedWhy[k] != "":
			c.note(r, k, k, notCarriedWhy[k])
		default:
			c.note(r, k, k, "no khook equivalent")
		}
	}
	c.defaultsInfo(r)
	c.helmArgs(r, h)
	c.postRenderer(r, h)
	c.patches(r, h)
	if v, ok, _ := get("verify"); ok && b(v) {
		c.verify(r, h, get)
	}
	if v, ok := r.m["devel"]; ok && b(v) && h.Version == "" {
		c.note(r, "devel", "devel", "khook installs the exact version given: pin one")
	}
}

// verify is verify: true, which helmfile passes to helm as --verify with
// the release's keyring, else helmDefaults': verify.provenance.keyring.
func (c *converter) verify(r *rel, h *importer.OutHelm, get func(string) (any, bool, bool)) {
	keyring, at := "", ""
	if v, ok, _ := get("keyring"); ok && str(v) != "" {
		// helmfile passes it to helm as written, read from where helmfile
		// runs: the helmfile's folder, as its other paths
		at = abs(r.st.dir, str(v))
		keyring = c.rel(at)
	}
	key := "" // the release's line, for helmDefaults'
	for _, k := range []string{"verify", "keyring"} {
		if _, own := r.m[k]; own {
			key = k
		}
	}
	if v, why := importer.Verify(h, keyring, at); v != nil {
		h.Verify = v
		r.out.Carried = append(r.out.Carried, "verify")
	} else {
		c.note(r, key, "verify", why)
	}
}

// labelName is a label's name (after any prefix/) or value.
var labelName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

func valueOf(n *yaml.Node) any {
	var v any
	if n != nil {
		_ = n.Decode(&v)
	}
	return v
}

// labels are commonLabels and the release's labels as step labels (for
// --selector), where they are Kubernetes labels.
func (c *converter) labels(r *rel) {
	labels := map[string]string{}
	for k, v := range r.st.commonLabels {
		labels[k] = v
	}
	if l, ok := r.m["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = str(v)
		}
	}
	for _, k := range sortedKeys(labels) {
		if !labelName.MatchString(strings.TrimPrefix(k, k[:strings.LastIndex(k, "/")+1])) || (labels[k] != "" && !labelName.MatchString(labels[k])) {
			// Labels only select releases (helmfile -l); nothing deployed
			// changes without one, so a warning, not a loss.
			c.infof(r, "labels", "labels."+k+"="+labels[k], "not a Kubernetes label, which khook step labels must be, so not written: select the step by its name instead")
			delete(labels, k)
		}
	}
	if len(labels) > 0 {
		r.step.Labels = labels
		r.out.Carried = append(r.out.Carried, "labels (khook step labels, for --selector)")
	}
}

// defaultsInfo says, once each, what a helmDefaults key the release does
// not override means for khook.
func (c *converter) defaultsInfo(r *rel) {
	for _, k := range sortedKeys(r.st.defaults) {
		if _, own := r.m[k]; own {
			continue
		}
		switch k {
		case "wait", "atomic", "createNamespace", "timeout", "force":
		case "args", "postRenderer", "postRendererArgs": // with the release's own, below
		case "verify", "keyring": // fields
		case "enableDNS", "plainHttp", "insecureSkipTLSVerify":
			if isTrue(valueOf(r.st.defaults[k])) {
				c.note(r, "", "helmDefaults."+k, notCarriedWhy[k])
			}
		case "devel":
			if isTrue(valueOf(r.st.defaults[k])) {
				c.note(r, "", "helmDefaults."+k, "khook installs the exact version without "+k)
			}
		case "skipDeps":
			// about local charts only (trial 46w's D6: said where none is)
			if r.step != nil && r.step.Helm != nil && (strings.HasPrefix(r.step.Helm.Chart, "./") || strings.HasPrefix(r.step.Helm.Chart, "../")) {
				c.defaultsNote(r, k)
			}
		default:
			c.defaultsNote(r, k)
		}
	}
}

// defaultsNote says once what helmDefaults.k means for khook.
func (c *converter) defaultsNote(r *rel, k string) {
	n := Note{Loc: importer.Loc{File: r.st.file, Line: r.st.defaultsLine[k]}, What: "helmDefaults." + k, Why: fieldWhy[k]}
	if _, ok := fieldWhy[k]; !ok {
		n.Why = "no khook equivalent; it does not change what is installed"
	}
	if n.Why != "" && !c.seen[n.String()] {
		c.seen[n.String()] = true
		c.res.Info = append(c.res.Info, n)
	}
}

func isTrue(v any) bool { return v == true || str(v) == "true" }

// fieldWhy is what a release field khook carries differently means for
// it; "" for fields mapped elsewhere. Any other field has no equivalent.
var fieldWhy = map[string]string{
	"waitForJobs":                "khook's wait: true waits for the release's objects to be ready but not for its Jobs to complete; add a wait step (for: condition=Complete) where a later step needs a Job's result",
	"cleanupOnFail":              "khook's atomic: true rolls a failed upgrade back; without it the failed release stays for the next apply to fix",
	"recreatePods":               "Helm 3 and later ignore it",
	"disableValidation":          "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
	"disableValidationOnInstall": "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
	"disableOpenAPIValidation":   "khook validates the rendered objects on the server; a chart that needs validation off fails in plan, not in apply",
	"kubeContext":                "khook runs against the --context (or kubeconfig) given when it runs",
	"historyMax":                 "khook keeps Helm's release history at Helm's default",
	"skipDeps":                   "a local chart with dependencies needs a Chart.lock, or dependencyUpdate: true",
	"reuseValues":                "khook always installs the values the spec gives, never the previous release's",
	"missingFileHandler":         "applied while importing: a missing file was skipped or refused as helmfile does",
	// Used only when helmfile uninstalls the release, or shows a diff: what is installed is the same.
	"deleteWait":              "helmfile uses it only when it uninstalls the release (destroy, delete); the install is the same",
	"deleteTimeout":           "helmfile uses it only when it uninstalls the release (destroy, delete); the install is the same",
	"cascade":                 "helmfile uses it only when it uninstalls the release (destroy, delete); the install is the same",
	"suppressDiff":            "it changes only what helmfile diff prints",
	"suppressOutputLineRegex": "it changes only what helmfile diff prints",
	"skipRefresh":             "khook reads the chart repository's index on every run; the install is the same",
	"waitRetries":             "khook's wait: true waits for the release's objects with watches, not helm's polling that these retries repeat",
	"trackMode":               "helmfile's kubedog tracking of the release's objects; khook's wait: true waits for them with watches",
	"trackTimeout":            "helmfile's kubedog tracking of the release's objects; khook's wait: true waits for them with watches",
	"trackLogs":               "helmfile's kubedog tracking of the release's objects; khook's wait: true waits for them with watches, and a failed step shows the pods' state and logs",
	"forceConflicts":          "khook's helm steps take the fields they render from other managers, as Helm's --force-conflicts does, whatever this says",
	"syncReleaseLabels":       "helmfile's labels then also label Helm's release record; khook's release record carries none, and the objects are the same",
	"name":                    "", "namespace": "", "chart": "", "version": "", "values": "", "secrets": "", "set": "", "setString": "",
	"needs": "", "installed": "", "installedTemplate": "", "condition": "", "labels": "", "wait": "", "waitTemplate": "",
	"atomic": "", "rollbackOnFailure": "", "takeOwnership": "", "skipSchemaValidation": "", "createNamespace": "", "timeout": "", "hooks": "", "force": "", "inherit": "",
	"conditionTemplate": "", "verify": "", "keyring": "", "devel": "", "args": "", "postRenderer": "", "postRendererArgs": "", "jsonPatches": "", "strategicMergePatches": "",
}

// notCarriedWhy says why a release field that changes what is installed
// has no khook equivalent.
var notCarriedWhy = map[string]string{
	"enableDNS":             importer.WhyDNS,
	"insecureSkipTLSVerify": importer.WhyTLS,
	"plainHttp":             importer.WhyPlainHTTP,
}

// helmArgs maps the helm arguments: helmDefaults.args, then a release's
// own args (helmfile v1.8.0 refuses that field; older states carry it).
// --include-crds together with --no-hooks, without --skip-crds, is the
// bootstrap "crds" helmfile: run as helmfile template piped through
// yq select(.kind == "CustomResourceDefinition") to kubectl apply
// --server-side, it puts the chart's CRDs in the cluster and nothing else,
// which is crds: only. --include-crds alone is what a helm step does
// anyway, --skip-crds is crds: skip; any other argument has no khook
// equivalent.
func (c *converter) helmArgs(r *rel, h *importer.OutHelm) {
	type arg struct {
		text, from string
		line       int
	}
	var args []arg
	for _, src := range []struct {
		v    any
		from string
		line int
	}{
		{valueOf(r.st.defaults["args"]), "helmDefaults.args", r.st.defaultsLine["args"]},
		{r.m["args"], "args", r.lineOf("args")},
	} {
		list, _ := src.v.([]any)
		for _, x := range list {
			for _, a := range strings.Fields(str(x)) {
				args = append(args, arg{a, src.from, src.line})
			}
		}
	}
	has := map[string]bool{}
	for _, a := range args {
		has[a.text] = true
	}
	// The post-renderer may do the CRD select itself (then hooks are
	// rendered, but filtered out with everything else).
	text, _, _ := postRendererOf(r)
	selects := selectsCRDs(text)
	crdsOnly := has["--include-crds"] && (has["--no-hooks"] || selects) && !has["--skip-crds"]
	flags := "--include-crds --no-hooks"
	if !has["--no-hooks"] {
		flags = "--include-crds with a post-renderer selecting the CustomResourceDefinitions"
	}
	for _, a := range args {
		switch {
		case crdsOnly && (a.text == "--include-crds" || a.text == "--no-hooks"):
			if a.text == "--no-hooks" {
				continue
			}
			h.CRDs = "only"
			// No release: nothing to create a namespace for, roll back or
			// wait on; the CRDs are cluster-scoped.
			h.CreateNamespace, h.Atomic, h.Wait = false, false, false
			const why = "written as crds: only; this assumes the helmfile is run as helmfile template | yq select(.kind == \"CustomResourceDefinition\") | kubectl apply --server-side: the chart's CRDs (crds/ and templated, with these values) are applied, no release is installed, no hook runs"
			if a.from == "args" {
				c.infoAt(r, a.line, "args "+flags, why)
			} else if n := (Note{Loc: importer.Loc{File: r.st.file, Line: a.line}, What: "helmDefaults.args " + flags, Why: why}); !c.seen[n.String()] {
				c.seen[n.String()] = true
				c.res.Info = append(c.res.Info, n)
			}
			r.out.Carried = append(r.out.Carried, flags+" as crds: only")
		case a.text == "--include-crds":
			c.infoAt(r, a.line, a.from+" "+a.text, "a khook helm step imported creates the chart's missing crds/ (crds: create), as helm install does")
		case a.text == "--skip-crds":
			h.CRDs = "skip"
			r.out.Carried = append(r.out.Carried, a.from+" --skip-crds as crds: skip")
		case a.text == "--no-hooks":
			c.noteAt(r, a.line, a.from+" "+a.text, "a khook helm step installs the whole chart and runs its hooks; only together with --include-crds (and without --skip-crds) does it mean the CRDs-only bootstrap that crds: only is")
		default:
			c.noteAt(r, a.line, a.from+" "+a.text, "extra helm arguments have no khook equivalent")
		}
	}
}

// patches maps a release's jsonPatches and strategicMergePatches (which
// helmfile applies with kustomize after rendering the chart) to a
// kustomize post-renderer: each inline or read from the file it names.
func (c *converter) patches(r *rel, h *importer.OutHelm) {
	var out []importer.OutKPatch
	for _, key := range []string{"jsonPatches", "strategicMergePatches"} {
		items, _ := r.m[key].([]any)
		for i, it := range items {
			what := fmt.Sprintf("%s[%d]", key, i)
			if p, ok := it.(string); ok { // a file holding the patch
				data, err := os.ReadFile(abs(r.st.dir, p))
				if err != nil {
					c.note(r, key, what, "the file "+p+" cannot be read: "+pathErr(err))
					continue
				}
				var v any
				if err := yaml.Unmarshal(data, &v); err != nil {
					c.note(r, key, what, "the file "+p+" is not YAML: "+yamlErrMsg(err))
					continue
				}
				it = stringKeys(v)
			}
			m, _ := it.(map[string]any)
			if m == nil {
				c.note(r, key, what, "neither a patch nor a file name")
				continue
			}
			if key == "strategicMergePatches" {
				body, _ := toYaml(m)
				out = append(out, importer.OutKPatch{Patch: body})
				continue
			}
			ops, hasOps := m["patch"].([]any)
			target, _ := m["target"].(map[string]any)
			t := map[string]string{}
			bad := ""
			for k, v := range target {
				switch k {
				case "group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector":
					t[k] = str(v)
				default:
					bad = k
				}
			}
			switch {
			case !hasOps:
				c.note(r, key, what, "a JSON patch from a path: is not carried; write its operations under patch:")
				continue
			case bad != "":
				c.note(r, key, what, "the target field "+bad+" has no khook equivalent")
				continue
			}
			body, _ := toYaml(ops)
			p := importer.OutKPatch{Patch: body}
			if len(t) > 0 {
				p.Target = t
			}
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		h.PostRenderers = []importer.OutPostRenderer{{Kustomize: &importer.OutKustomize{Patches: out}}}
		r.out.Carried = append(r.out.Carried, "jsonPatches/strategicMergePatches as a kustomize post-renderer")
	}
}

// postRenderer is helmfile's post-renderer command (the release's, else
// helmDefaults'). khook runs no commands; the one the CRDs-only helmfiles
// give, a yq select of the CustomResourceDefinitions, is what crds: only
// does already.
func (c *converter) postRenderer(r *rel, h *importer.OutHelm) {
	text, from, line := postRendererOf(r)
	if text == "" {
		return
	}
	cmd := strings.Fields(text)[0]
	if h.CRDs == "only" && selectsCRDs(text) {
		n := Note{Loc: importer.Loc{File: r.st.file, Line: line}, What: from + " " + cmd, Why: "it keeps the CustomResourceDefinitions of the rendered chart, which crds: only applies already"}
		if !c.seen[n.String()] {
			c.seen[n.String()] = true
			c.res.Info = append(c.res.Info, n)
		}
		return
	}
	c.noteAt(r, line, from+" "+cmd, "a post-renderer command changes what is installed and khook runs no commands: write its changes as postRenderers: [{kustomize: {patches: …}}]")
}

// postRendererOf is the release's post-renderer command line (its own,
// else helmDefaults'), where it is written, or "".
func postRendererOf(r *rel) (text, from string, line int) {
	cmd, line, from := r.m["postRenderer"], r.lineOf("postRenderer"), "postRenderer"
	args := r.m["postRendererArgs"]
	if cmd == nil {
		if n := r.st.defaults["postRenderer"]; n != nil {
			cmd, line, from = valueOf(n), r.st.defaultsLine["postRenderer"], "helmDefaults.postRenderer"
			args = valueOf(r.st.defaults["postRendererArgs"])
		}
	}
	if cmd == nil || strings.TrimSpace(str(cmd)) == "" {
		return "", "", 0
	}
	text = str(cmd)
	if l, ok := args.([]any); ok {
		for _, a := range l {
			text += " " + str(a)
		}
	}
	return text, from, line
}

// selectCRDs is a yq (or jq) filter that keeps the CustomResourceDefinitions.
var selectCRDs = regexp.MustCompile(`select\(\s*\.kind\s*==\s*"CustomResourceDefinition"\s*\)`)

// selectsCRDs tells a post-renderer that keeps only the CRDs.
func selectsCRDs(cmdline string) bool {
	return selectCRDs.MatchString(cmdline) && !strings.Contains(cmdline, "del(")
}
