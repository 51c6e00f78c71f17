package shscript

import (
	"bytes"
	"cmp"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/khook/khook/internal/importer"
)

func (t *translator) kDelete(x *cmd, f flags) {
	ign := f.is("ignore-not-found")
	base := &importer.OutDelete{Namespace: f.get("n", "namespace"), AllNamespaces: f.is("A", "all-namespaces"), Selector: f.get("l", "selector"), IgnoreNotFound: &ign}
	var hurry []string
	for _, fl := range f.list {
		if fl.name == "force" || fl.name == "now" || fl.name == "grace-period" {
			hurry = append(hurry, "--"+fl.name)
		}
	}
	if len(hurry) > 0 {
		// --force --grace-period=0 (46zza's N6): dropped, said
		t.info(x.stmt, strings.Join(hurry, " "), "khook's delete step has no such option: it deletes with each object's own grace period, as kubectl without them")
	}
	if fs := f.get("f", "filename"); fs != "" {
		srcs, ok := t.manifestSource(x, fs, f.is("R", "recursive"))
		if !ok {
			return
		}
		for _, s := range srcs {
			if abs := t.missing(s); abs != "" {
				t.info(x.stmt, "manifest "+s.File+s.Kustomize, "not there at import ("+t.display(abs)+"); the step reads it when it runs")
			}
		}
		base.Manifests = srcs
		if st := (&importer.OutStep{Delete: base, Timeout: deleteTimeout(f)}); t.addStep(x.stmt, "delete-"+sourceName(srcs[0]), "", st) != nil {
			for _, kind := range t.sourceKinds(srcs) {
				t.dataKept(x, kind, st) // kubectl delete -f pvc.yaml: the same word (w1's note)
			}
		}
		return
	}
	targets := kindNames(f.pos[1:])
	if len(targets) == 0 && len(f.pos) == 2 && (base.Selector != "" || f.is("all")) {
		// kubectl delete --all jobs,configmaps: each type (trial 46zl's D1)
		targets = strings.Split(f.pos[1], ",")
	}
	if len(targets) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "no object named; write a delete: step by hand")
		return
	}
	before := len(t.m.Commands)
	for _, tg := range targets {
		d := *base
		d.Resource = tg
		if d.AllNamespaces && strings.Contains(tg, "/") {
			if !t.namedAcrossAll(x, tg) {
				continue
			}
			d.AllNamespaces = false
		}
		if st := (&importer.OutStep{Delete: &d, Timeout: deleteTimeout(f)}); t.addStep(x.stmt, "delete-"+tg, "", st) != nil {
			t.dataKept(x, tg, st)
		}
	}
	if added := t.m.Commands[before:]; len(added) > 1 {
		// one command, a step per type: counted once (trial 46zr's N2)
		at := t.loc(x.stmt)
		t.m.Commands = append(t.m.Commands[:before+1], slices.DeleteFunc(slices.Clone(added[1:]), func(c importer.Command) bool { return c.Loc == at && c.Fate == importer.FateStep })...)
	}
}

// namedAcrossAll: kubectl delete --all-namespaces KIND NAME deletes the
// object when KIND is cluster-scoped, where kubectl ignores the flag, so
// the step names the object alone (trial 46s69g's D1: the step made with
// allNamespaces and a name, then refused by khook's own spec); for a
// namespaced kind kubectl refuses the name, and for a kind khook does not
// know it cannot tell: named not carried.
func (t *translator) namedAcrossAll(x *cmd, tg string) bool {
	full, _, _ := strings.Cut(tg, "/")
	kind, _, _ := strings.Cut(strings.ToLower(full), ".")
	switch {
	case clusterScoped(tg):
		return true
	case namespacedKinds[strings.TrimSuffix(kind, "s")] || namespacedKinds[kind]:
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl refuses to delete "+tg+" by name across all namespaces (a namespaced kind), so the script's own command fails: give -n NAMESPACE in place of --all-namespaces and import again")
	default:
		t.account(x.stmt, importer.FateNotCarried, "", "khook cannot tell whether "+full+" is cluster-scoped, where kubectl ignores --all-namespaces and deletes "+tg+", or namespaced, where kubectl refuses the name: if cluster-scoped, write delete: {resource: "+tg+"} by hand")
	}
	return false
}

// keepsData names, by kubectl's names of a kind, what khook's delete step
// keeps unless it says the word (docs/dsl.md): the word and what is kept.
var keepsData = map[string][2]string{
	"pvc": {"deleteData", "a PersistentVolumeClaim (and its data)"}, "persistentvolumeclaim": {"deleteData", "a PersistentVolumeClaim (and its data)"},
	"pv": {"deleteData", "a PersistentVolume (and its data)"}, "persistentvolume": {"deleteData", "a PersistentVolume (and its data)"},
	"sts": {"deleteData", "a StatefulSet whose persistentVolumeClaimRetentionPolicy deletes its claims"}, "statefulset": {"deleteData", "a StatefulSet whose persistentVolumeClaimRetentionPolicy deletes its claims"},
	"crd": {"deleteCRDs", "a CRD of which custom resources exist"}, "customresourcedefinition": {"deleteCRDs", "a CRD of which custom resources exist"},
}

// dataKept says at the line that the delete step keeps what holds data,
// where kubectl deletes it: khook never writes the word for the user
// (trial 46s68e's D1: kubectl delete --all pvc carried silently).
func (t *translator) dataKept(x *cmd, tg string, st *importer.OutStep) {
	kind, _, _ := strings.Cut(strings.ToLower(tg), "/")
	kind, _, _ = strings.Cut(kind, ".")
	k, ok := keepsData[kind]
	if !ok {
		// pvcs, statefulsets; sts itself ends in s (trial 46s69g's N4)
		if k, ok = keepsData[strings.TrimSuffix(kind, "s")]; !ok {
			return
		}
	}
	t.stepInfo(t.loc(x.stmt), st, "khook's delete step keeps "+k[1]+" unless it says "+k[0]+": true, so the spec keeps what the script deletes: add "+k[0]+": true to the step if that is meant")
}

// sourceKinds are the kinds (lower case, once each) of the objects in
// srcs' files and inline text that the import can read.
func (t *translator) sourceKinds(srcs []importer.OutSource) []string {
	var kinds []string
	for _, src := range srcs {
		text, _ := t.sourceText(src)
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc struct {
				Kind string `yaml:"kind"`
			}
			if dec.Decode(&doc) != nil {
				break
			}
			if k := strings.ToLower(doc.Kind); k != "" && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

// deleteTimeout is kubectl delete's --timeout, the step's bound on the
// deletion it waits for (trial 46s67g's D3: dropped without a word); "0"
// is kubectl's default (none), the step's own.
func deleteTimeout(f flags) string {
	if to := f.get("timeout"); to != "0" && to != "0s" {
		return to
	}
	return ""
}

// conditionNames are kubectl wait's condition types as the API writes
// them (kubectl matches them case-insensitively).
var conditionNames = map[string]string{"available": "Available", "ready": "Ready", "established": "Established",
	"complete": "Complete", "progressing": "Progressing", "initialized": "Initialized", "containersready": "ContainersReady",
	"podscheduled": "PodScheduled", "namesaccepted": "NamesAccepted", "failed": "Failed"}

// podRef is pod/${NAME}, a wait's target named by a variable.
var wholeRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

var podRef = regexp.MustCompile(`^pods?/\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

func (t *translator) kWait(x *cmd, f flags) {
	forv := f.get("for")
	if k, v, ok := strings.Cut(forv, "="); ok && k == "condition" {
		name, val, hasVal := strings.Cut(v, "=")
		if n, ok := conditionNames[strings.ToLower(name)]; ok {
			name = n
		}
		forv = "condition=" + name
		if hasVal {
			forv += "=" + val
		}
	}
	if forv == "create" {
		// kubectl 1.31: until the object exists. A wait on a named object
		// that does not exist yet waits for it, and cel=true then holds.
		forv = "cel=true"
	}
	if forv == "" || !(strings.HasPrefix(forv, "condition=") || strings.HasPrefix(forv, "jsonpath=") || forv == "delete" || forv == "cel=true") {
		t.account(x.stmt, importer.FateNotCarried, "", "--for="+forv+" has no wait: form in khook (condition=, jsonpath=, delete, create); add a wait: step by hand")
		return
	}
	targets := kindNames(f.pos[1:])
	if len(targets) == 0 && len(f.pos) == 2 {
		targets = []string{f.pos[1]} // TYPE with -l, --all or -A
	}
	if len(targets) == 0 && len(f.all("f", "filename")) > 0 {
		t.waitOnFiles(x, f, forv)
		return
	}
	if len(targets) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "no object named to wait on")
		return
	}
	for _, tg := range targets {
		if t.podByName(x.stmt, tg) {
			continue
		}
		w := &importer.OutWait{For: forv, On: tg, Namespace: f.get("n", "namespace"), AllNamespaces: f.is("A", "all-namespaces"), Selector: f.get("l", "selector"), FieldSelector: f.get("field-selector")}
		if m := podRef.FindStringSubmatch(tg); m != nil && t.pods[m[1]].sel != "" && w.Selector == "" {
			// POD=$(kubectl get pod -l app=x … items[0] …); kubectl wait pod/$POD:
			// the pods the label selects (trial 46x's D4: a name to look up by hand)
			p := t.pods[m[1]]
			w.On, w.Selector, w.Namespace = "pod", p.sel, cmp.Or(w.Namespace, p.ns)
			t.info(x.stmt, tg, "the pod the script picks by "+p.sel+": carried as the wait on the pods it selects (kubectl wait waits on the first one)")
		}
		st := &importer.OutStep{Wait: w, Timeout: kubectlWaitTimeout}
		if to := f.get("timeout"); to != "" {
			st.Timeout = t.duration(x, to)
		}
		t.addStep(x.stmt, "wait-"+tg, "", st)
	}
}

func (t *translator) kRollout(x *cmd, f flags) {
	if len(f.pos) < 2 {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl rollout without a command")
		return
	}
	action := f.pos[1]
	tg, ok := target(f.pos[2:])
	switch {
	case action == "history":
		t.account(x.stmt, importer.FateReadOnly, "", "it changes nothing in the cluster")
		return
	case action == "status" && len(f.pos) == 3 && !strings.Contains(f.pos[2], "/"):
		// kubectl -n X rollout status deployment [-l sel]: every one of
		// the namespace in turn (kubectl ≥ 1.25); khook's rollout: takes
		// one named object, its wait: all of them
		kind := f.pos[2]
		if long, ok := map[string]string{"deploy": "deployment", "deployments": "deployment", "sts": "statefulset", "statefulsets": "statefulset", "ds": "daemonset", "daemonsets": "daemonset"}[kind]; ok {
			kind = long
		}
		if kind != "deployment" { // a StatefulSet or DaemonSet has no Available condition to wait for
			t.account(x.stmt, importer.FateNotCarried, "", "a rollout status of every "+kind+" of the namespace: khook's rollout: step takes one named object; write one per "+kind)
			return
		}
		w := &importer.OutWait{For: "condition=Available", On: kind, Namespace: f.get("n", "namespace"), Selector: f.get("l", "selector")}
		if w.Namespace == "" {
			w.Namespace = "default"
		}
		st := &importer.OutStep{Wait: w}
		if to := f.get("timeout"); to != "" {
			st.Timeout = t.duration(x, to)
		}
		if t.addStep(x.stmt, "wait-"+kind, "", st) != nil {
			t.info(x.stmt, "rollout status "+f.pos[2], "every "+kind+" of the namespace: carried as the wait for each to be Available (kubectl also waits for the new pods of a rollout still under way)")
			if st.Timeout == "" { // kubectl waits without limit, the step 5m (trial 46s68g's D4)
				t.rolloutUnbounded(x, st)
			}
		}
		return
	case (action != "status" && action != "restart") || !ok:
		t.account(x.stmt, importer.FateNotCarried, "", "khook's rollout: step restarts a workload or waits for its rollout (one named object); do this by hand")
		return
	}
	ns := f.get("n", "namespace")
	if ns == "" {
		ns = "default"
	}
	r := &importer.OutRollout{Namespace: ns}
	if action == "status" {
		r.Status = tg
	} else {
		r.Restart = tg
	}
	st := &importer.OutStep{Rollout: r}
	if to := f.get("timeout"); to != "" {
		st.Timeout = t.duration(x, to)
	}
	if t.addStep(x.stmt, action+"-"+tg, "", st) != nil && action == "status" && st.Timeout == "" {
		t.rolloutUnbounded(x, st)
	}
}

func (t *translator) kPatch(x *cmd, f flags) {
	if sub := f.get("subresource"); sub != "" {
		// --subresource=status: the server drops status sent to the object
		// itself, so a patch: step would change nothing (trial 46zy's D1)
		t.account(x.stmt, importer.FateNotCarried, "", "khook's patch: step patches the object, not its "+sub+" subresource, where the server would drop the change: do it by hand, or in a job: step that runs kubectl")
		return
	}
	tg, ok := target(f.pos[1:])
	text := f.get("p", "patch")
	if pf := f.get("patch-file"); pf != "" {
		file := t.abs(pf)
		if d := t.defaultPath(pf); d != "" {
			file = d // ${REPO_ROOT_DIR}/hack/p.yaml: the default's (trial 46s67e's D3)
		}
		data, err := readFile(file)
		if err != nil {
			t.account(x.stmt, importer.FateNotCarried, "", "its patch file "+pf+" cannot be read at import")
			return
		}
		// the file's own ${QUERY} is literal, as in a manifest read
		// inline, or the spec is refused as a whole (trial 46s68n's D2)
		text = literalText(string(data))
	}
	var patch any
	if f.get("patch-file") == "" && yaml.Unmarshal([]byte(text), &patch) == nil && strings.Contains(text, "${") {
		if _, scalar := patch.(string); scalar { // -p="${PATCH}" the script builds
			t.account(x.stmt, importer.FateNotCarried, "", "its patch is only known when the script runs ("+text+"); write the patch: step by hand")
			return
		}
	}
	if !ok || text == "" || yaml.Unmarshal([]byte(text), &patch) != nil {
		t.account(x.stmt, importer.FateNotCarried, "", "khook's patch: step takes one named object and a YAML or JSON patch; write it by hand")
		return
	}
	p := &importer.OutPatch{Target: tg, Namespace: f.get("n", "namespace"), Type: f.get("type"), Patch: patch}
	t.addStep(x.stmt, "patch-"+tg, "", &importer.OutStep{Patch: p})
}

// kSetImage is `kubectl set image deployment/x c=img`: a strategic patch
// of the named containers' images (which merges containers by name).
func (t *translator) kSetImage(x *cmd, f flags) {
	var objs []string
	var containers []any
	for _, p := range f.pos[2:] {
		if c, img, ok := strings.Cut(p, "="); ok && c != "*" {
			containers = append(containers, map[string]any{"name": c, "image": img})
		} else {
			objs = append(objs, p)
		}
	}
	tg, ok := target(objs)
	if len(f.pos) < 2 || f.pos[1] != "image" || !ok || len(containers) == 0 || f.get("l", "selector") != "" || f.is("all") {
		t.account(x.stmt, importer.FateNotCarried, "", "khook has no step for kubectl set but a patch: step on one named object; write the patch by hand (kubectl set … --dry-run=client -o yaml shows it)")
		return
	}
	spec := map[string]any{"containers": containers}
	kind := strings.ToLower(strings.SplitN(tg, "/", 2)[0])
	if kind != "pod" && kind != "pods" && kind != "po" {
		spec = map[string]any{"template": map[string]any{"spec": spec}}
		if kind == "cronjob" || kind == "cronjobs" || kind == "cj" {
			spec = map[string]any{"jobTemplate": map[string]any{"spec": spec}}
		}
	}
	p := &importer.OutPatch{Target: tg, Namespace: f.get("n", "namespace"), Type: "strategic", Patch: map[string]any{"spec": spec}}
	t.addStep(x.stmt, "set-image-"+tg, "", &importer.OutStep{Patch: p})
}

// kLabel is label/annotate as a merge patch (k=v sets, k- removes).
func (t *translator) kLabel(x *cmd, f flags, sub string) {
	var objs, pairs []string
	for _, p := range f.pos[1:] {
		if strings.Contains(p, "=") || strings.HasSuffix(p, "-") {
			pairs = append(pairs, p)
		} else {
			objs = append(objs, p)
		}
	}
	tg, ok := target(objs)
	if !ok || len(pairs) == 0 || f.get("l", "selector") != "" || f.is("all") {
		t.account(x.stmt, importer.FateNotCarried, "", "khook's patch: step takes one named object; label the objects by hand or in their manifests")
		return
	}
	kv := map[string]any{}
	for _, p := range pairs {
		if k, v, ok := strings.Cut(p, "="); ok && strings.Contains(v, "${") {
			// preview-pr=${PR}: khook substitutes text, and a label's value
			// is a string, never the number 42 (46zzb's N8)
			kv[k] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: yaml.DoubleQuotedStyle}
		} else if ok {
			kv[k] = v
		} else {
			kv[strings.TrimSuffix(p, "-")] = nil
		}
	}
	field := "labels"
	if sub == "annotate" {
		field = "annotations"
	}
	p := &importer.OutPatch{Target: tg, Namespace: f.get("n", "namespace"), Type: "merge", Patch: map[string]any{"metadata": map[string]any{field: kv}}}
	t.addStep(x.stmt, sub+"-"+tg, "", &importer.OutStep{Patch: p})
}

// kScale is `kubectl scale TYPE NAME --replicas=N` as a merge patch; a
// count the script computes when it runs (--replicas=${CANARY}, 46zzb's
// D2) is its variable, which khook substitutes as text: a number there.
func (t *translator) kScale(x *cmd, f flags) {
	tg, ok := target(f.pos[1:])
	r := f.get("replicas")
	var n any = r
	if i, err := strconv.Atoi(r); err == nil {
		n = i
	}
	switch {
	case !ok:
		t.account(x.stmt, importer.FateNotCarried, "", "khook's patch: step takes one named object; set replicas in its manifest or values")
		return
	case n == r && !wholeRef.MatchString(r):
		t.account(x.stmt, importer.FateNotCarried, "", "the replica count ("+cmpOr(r, "none")+") is not a number khook can write: set replicas in the object's manifest or a patch: step by hand")
		return
	}
	p := &importer.OutPatch{Target: tg, Namespace: f.get("n", "namespace"), Type: "merge", Patch: map[string]any{"spec": map[string]any{"replicas": n}}}
	t.addStep(x.stmt, "scale-"+tg, "", &importer.OutStep{Patch: p})
}

// kRun is `kubectl run NAME --image=IMG --restart=Never [-- ARGS]`: a pod
// that runs a command to its end, which is what a job: step does (it
// waits, and fails when the command fails, as kubectl run -i --rm does).
// A pod that keeps running (--restart=Always, kubectl's default) is not a
// job.
func (t *translator) kRun(x *cmd, f flags) {
	if len(f.pos) < 2 || f.get("image") == "" {
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl run needs a name and --image; the script's command fails")
		return
	}
	if r := f.get("restart"); r != "Never" && r != "OnFailure" {
		t.account(x.stmt, importer.FateNotCarried, "", "a pod that keeps running (--restart="+cmpOr(r, "Always")+"): write it as a manifest (a Deployment) in an apply: step")
		return
	}
	if f.get("overrides") != "" {
		t.account(x.stmt, importer.FateNotCarried, "", "--overrides changes the pod in ways a job: step does not read; write the job: step by hand")
		return
	}
	if f.is("i", "stdin") && (x.stdin != nil || t.pipeIn != nil) {
		// kubectl run -i … psql < dump.sql: the pod's command reads what
		// the script feeds it, which a job: step has no way to give (trial
		// 46s68t's D1: a job with no input, the restore never made)
		t.account(x.stmt, importer.FateNotCarried, "", "it feeds the pod's command its standard input (a file, a here-document or a pipe), which a job: step does not give: put the input in a ConfigMap or the image and write the job: step to read it there")
		return
	}
	name := f.pos[1]
	if endless.MatchString(strings.Join(f.pos[2:], " ")) {
		// --command -- sh -c "while true; do sleep 30; done": a pod kept
		// for kubectl exec, which a job: step would wait on for ever
		// (trial 46zu's D3)
		if t.unrunPods == nil {
			t.unrunPods = map[string]importer.Loc{}
		}
		t.unrunPods[name] = t.loc(x.stmt)
		t.account(x.stmt, importer.FateNotCarried, "", "the pod it starts runs until it is deleted (its command never ends): a pod kept for kubectl exec, which a job: step would wait on for ever; do the work the script then execs in it as a job: step's command")
		return
	}
	j := &importer.OutJob{Image: f.get("image"), Namespace: f.get("n", "namespace")}
	if f.is("command") {
		j.Command = f.pos[2:]
	} else {
		j.Args = f.pos[2:]
	}
	for _, e := range f.all("env") {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			continue
		}
		if j.Env == nil {
			j.Env = map[string]string{}
		}
		vn, ok := t.credential(x, v, importer.SecretLooking(k), varName(name+"_"+k), "the "+k+" of kubectl run "+name)
		switch {
		case !ok:
			t.account(x.stmt, importer.FateNotCarried, "", "the "+k+" it passes is built from several values; write the job: step by hand")
			return
		case vn != "":
			v = "${" + vn + "}"
		}
		j.Env[k] = v
	}
	if !f.is("i", "stdin", "attach", "rm", "it", "ti") {
		t.info(x.stmt, "kubectl run "+name, "khook's job: step waits for the command to finish and fails when it fails; the script went on without waiting")
	}
	if t.runJobs == nil {
		t.runJobs = map[string]bool{}
	}
	t.runJobs[name] = true
	t.addStep(x.stmt, "run-"+name, "", &importer.OutStep{Job: j})
}

// endless is a container command that never ends.
var endless = regexp.MustCompile(`while\s+(true|:)\s*;|sleep\s+(infinity|inf)\b|tail\s+-f\s+/dev/null|sleep\s+[0-9]{6,}`)

// unrunPod is where kubectl run started the pod a wait or delete of f
// names, when that run is not carried ("" for none).
func (t *translator) unrunPod(f flags) string {
	if len(f.pos) < 2 || f.pos[0] != "wait" && f.pos[0] != "delete" {
		return ""
	}
	for i, p := range f.pos[1:] {
		name, isPod := strings.CutPrefix(p, "pod/")
		if !isPod && i > 0 && (f.pos[i] == "pod" || f.pos[i] == "pods" || f.pos[i] == "po") {
			name, isPod = p, true
		}
		if at, ok := t.unrunPods[name]; isPod && ok {
			return at.String()
		}
	}
	return ""
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// waitOnFiles is kubectl wait --for=… -f SRC: the objects SRC holds. After
// kubectl apply -f SRC it is that apply step's waitFor (the DSL's apply +
// wait in one step, 46zzj's D2); otherwise the objects of the file at
// import, each a wait; a URL khook does not read at import is named.
func (t *translator) waitOnFiles(x *cmd, f flags, forv string) {
	srcs := f.all("f", "filename")
	if len(srcs) == 1 && forv != "delete" {
		if st := t.appliedLast(srcs[0]); st != nil && (st.Apply.WaitFor == "" || st.Apply.WaitFor == forv) {
			st.Apply.WaitFor = forv
			if to := f.get("timeout"); to != "" && longer(t.duration(x, to), st.Timeout) {
				st.Timeout = t.duration(x, to)
			}
			t.account(x.stmt, importer.FateFolded, st.Name, "the apply step of "+srcs[0]+" waits for what it applied (waitFor: "+forv+")")
			return
		}
	}
	var targets []string
	for _, src := range srcs {
		if strings.Contains(src, "://") || strings.Contains(src, "${") {
			t.account(x.stmt, importer.FateNotCarried, "", "it waits on the objects of "+src+", which khook does not read at import and no apply step before it applies: add a wait: step on them by kind and name")
			return
		}
		objs, err := manifestObjects(t.abs(src))
		if err != nil || len(objs) == 0 {
			t.account(x.stmt, importer.FateNotCarried, "", "it waits on the objects of "+src+", which khook cannot read at import: add a wait: step on them by kind and name")
			return
		}
		targets = append(targets, objs...)
	}
	for _, tg := range targets {
		st := &importer.OutStep{Wait: &importer.OutWait{For: forv, On: tg, Namespace: f.get("n", "namespace")}, Timeout: kubectlWaitTimeout}
		if to := f.get("timeout"); to != "" {
			st.Timeout = t.duration(x, to)
		}
		t.addStep(x.stmt, "wait-"+tg, "", st)
	}
}

// appliedLast is the last apply step before this one that applies src (a
// URL as written, a file of the repository), nil for none.
func (t *translator) appliedLast(src string) *importer.OutStep {
	for i := len(t.m.Steps) - 1; i >= 0; i-- {
		st := t.m.Steps[i].Out
		if st.Apply == nil || st.When != strings.Join(t.when, " && ") {
			continue
		}
		for _, m := range st.Apply.Manifests {
			if m.URL != "" && m.URL == src || m.File != "" && !strings.Contains(src, "://") && m.File == t.specPath(src) {
				return st
			}
		}
	}
	return nil
}

// manifestObjects are the kind/name of each object of a manifest file.
func manifestObjects(path string) ([]string, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if doc.Kind == "" || doc.Metadata.Name == "" {
			continue
		}
		typ := strings.ToLower(doc.Kind) // kubectl's TYPE: the kind, with its group where it has one
		if group, _, ok := strings.Cut(doc.APIVersion, "/"); ok && doc.Kind != "CustomResourceDefinition" {
			typ += "." + group
		} else if ok {
			typ = "crd"
		}
		out = append(out, typ+"/"+doc.Metadata.Name)
	}
}
