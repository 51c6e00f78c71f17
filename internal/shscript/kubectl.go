package shscript

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/words"
)

// kubectl is one kubectl (or oc) command.
func (t *translator) kubectl(x *cmd) {
	f := parseFlags(x.args[1:], kubectlValued)
	t.subcommandDefault(x, f.pos)
	if len(f.pos) == 0 {
		t.account(x.stmt, importer.FateReadOnly, "", "kubectl without a command changes nothing")
		return
	}
	if f.pos[0] == "config" && t.otherKubeconfig(f.get("kubeconfig")) {
		// use-context X --kubeconfig=FILE sets the current context of FILE
		// alone: the commands after it that name no kubeconfig still work
		// on the script's (trial 46s70j's D1: "the script works on
		// context X from here")
		t.account(x.stmt, importer.FateReadOnly, "", "it works only on the kubeconfig "+f.get("kubeconfig")+" (its --kubeconfig), not on the one the script's commands that name none use: nothing to carry")
		return
	}
	if t.setContextNamespace(x, f) {
		return
	}
	if len(f.pos) > 2 && f.pos[0] == "config" && f.pos[1] == "use-context" && x.ok {
		t.cluster.current = "context " + t.contextAsRun(x, f.pos[2])
	}
	if len(f.pos) == 4 && f.pos[0] == "config" && f.pos[1] == "rename-context" && x.ok {
		t.cluster.renamed(f.pos[2], f.pos[3])
	}
	t.cluster.cmd = t.cluster.of(t.contextAsRun(x, f.get("context")), f.get("kubeconfig"))
	if f.pos[0] != "config" && kubectlChangesNothing(f.pos) { // config says why below
		t.account(x.stmt, importer.FateReadOnly, "", "it changes nothing in the cluster")
		switch {
		case !t.foreground(x):
		case f.pos[0] == "logs" && f.is("f", "follow"):
			t.followedLogs(x, f)
		case f.pos[0] == "get" && f.is("w", "watch"):
			t.halted(x.stmt, "it follows until it is stopped, and stopping it (Ctrl-C) ends the script", "drop what follows it if it was never meant to run, or run it in the background (&)")
		}
		return
	}
	if f.pos[0] == "port-forward" || f.pos[0] == "proxy" {
		// nothing to carry whatever its arguments (46v's D8: said "write the step by hand")
		t.account(x.stmt, importer.FateNotCarried, "", "khook has no step for kubectl "+f.pos[0]+"; "+kubectlAdvice(f.pos[0]))
		if t.foreground(x) {
			t.halted(x.stmt, "it runs in the foreground until it is stopped, and stopping it (Ctrl-C) ends the script", "run it by hand after khook, or drop what follows it if it was never meant to run")
		}
		return
	}
	if f.pos[0] == "config" && !x.ok {
		// kubectl config use-context $(kubectl config current-context):
		// the local kubeconfig only, whatever the argument (trial 46zs's N2)
		t.account(x.stmt, importer.FateReadOnly, "", "it changes only the local kubeconfig; khook runs against the cluster it is given (--kubeconfig, --context)")
		return
	}
	if t.noStepSplit(x, f.pos[0]) || t.splitUnknown(x) {
		return
	}
	if !x.ok {
		t.account(x.stmt, importer.FateNotCarried, "", "an argument is only known when the script runs ("+x.why+"); write the step by hand")
		return
	}
	if f.get("context") != "" || f.get("kubeconfig") != "" {
		t.info(x.stmt, "--context/--kubeconfig", "khook runs against the cluster it is given")
	}
	if t.ctxNS != "" && f.get("n", "namespace") == "" {
		f.list = append(f.list, flag{name: "namespace", val: t.ctxNS, has: true})
	}
	if dr := f.get("dry-run"); (dr != "" && dr != "none") || f.is("dry-run") {
		if f.pos[0] == "create" && t.createWrites(x, f) {
			return // its fate is that of the apply that reads the file
		}
		t.account(x.stmt, importer.FateReadOnly, "", "--dry-run changes nothing in the cluster")
		return
	}
	if at := t.unrunPod(f); at != "" {
		t.account(x.stmt, importer.FateNotCarried, "", "it works on the pod kubectl run starts at "+at+", which is not carried")
		return
	}
	before := len(t.m.Steps)
	t.kubectlSub(x, f)
	if f.get("n", "namespace") == "" && !f.is("A", "all-namespaces") {
		t.contextNamespace(x, "kubectl", t.m.Steps[before:])
	}
}

// subcommandDefault reads a subcommand held in a variable with a default
// (ACTION=${1:-apply}; kubectl ${ACTION} -f ns.yaml) as that default: the
// step can do one thing only, and the script does that one run bare.
func (t *translator) subcommandDefault(x *cmd, pos []string) {
	if len(pos) == 0 {
		return
	}
	m := varRef.FindStringSubmatch(pos[0])
	if m == nil || m[0] != pos[0] {
		return
	}
	v := t.m.Var(m[1])
	if v == nil || v.Default == nil || !syntax.ValidName(strings.ReplaceAll(*v.Default, "-", "_")) {
		return
	}
	t.info(x.stmt, pos[0], "read as "+*v.Default+", the default of "+m[1]+" ("+v.From.String()+"): khook's step does what "+x.args[0]+" "+*v.Default+" does, whatever "+m[1]+" is set to")
	for i, a := range x.args {
		if a == pos[0] {
			x.args[i] = *v.Default
			break
		}
	}
	pos[0] = *v.Default
}

// kubectlSub carries one kubectl command by its subcommand.
func (t *translator) kubectlSub(x *cmd, f flags) {
	switch sub := f.pos[0]; sub {
	case "apply", "replace":
		t.kApply(x, f)
	case "create":
		if len(f.pos) == 1 {
			// kubectl create writes no last-applied annotation, so a CRD too
			// large for one (ECK's, TiDB's) is created; a client-side apply
			// would be refused (trials 46s67a N5, 46s67j N1): server-side
			t.info(x.stmt, "kubectl create -f", "kubectl create fails when an object exists; khook's apply step creates or updates it, server-side (serverSide: true) as create keeps no last-applied annotation, which a large CRD does not fit")
			f.list = append(f.list, flag{name: "server-side"})
			t.kApply(x, f)
			return
		}
		t.kCreate(x, f)
	case "delete":
		t.kDelete(x, f)
	case "wait":
		t.kWait(x, f)
	case "rollout":
		t.kRollout(x, f)
	case "patch":
		t.kPatch(x, f)
	case "label", "annotate":
		t.kLabel(x, f, sub)
	case "scale":
		t.kScale(x, f)
	case "run":
		if t.runGenerator(x, f) {
			return
		}
		if len(f.pos) > 1 && f.get("image") != "" && t.kRunPod(x, f) {
			return
		}
		t.kRun(x, f)
	case "expose":
		t.kExpose(x, f)
	case "set":
		t.kSetImage(x, f)
	case "config":
		t.account(x.stmt, importer.FateReadOnly, "", "it changes only the local kubeconfig; khook runs against the cluster it is given (--kubeconfig, --context)")
		if len(f.pos) > 1 && f.pos[1] == "use-context" {
			// the script picks its cluster: the spec's is the one khook is given
			t.info(x.stmt, t.text(x.stmt), "the script picks its cluster here; khook runs against the cluster it is given (khook's --context or --kubeconfig): pass this context when you run it")
		}
	default:
		if toolName(x.args[0]) == "kubectl" && !kubectlCommands[sub] {
			// kubectl hlf ca create … (trial 46zd's D10): a plugin's command
			t.account(x.stmt, importer.FateNotCarried, "", "kubectl "+sub+" is a kubectl plugin's command (kubectl-"+sub+"), which khook does not run: write the objects it makes as manifests in an apply: step, or run it in a job: step")
			return
		}
		t.account(x.stmt, importer.FateNotCarried, "", "khook has no step for kubectl "+sub+"; "+kubectlAdvice(sub))
	}
}

// followedLogs says what kubectl logs -f in the foreground holds up: it
// returns when the container it follows exits (trial 46s70h's D3: a
// kubectl run pod that finishes, said to hold the script until Ctrl-C),
// so only a workload's, kept running (deploy/op, an operator: trial
// 46s67n's D2, the 7 commands after it never reached), is said to; one
// the script runs as a job, nothing; any other pod, what holds if it
// keeps running.
func (t *translator) followedLogs(x *cmd, f flags) {
	kind, name, target := "pod", "", f.get("f") // logs -f POD: read as -f's value
	if len(f.pos) > 1 {
		target = f.pos[1]
	}
	if target != "" {
		if k, n, ok := strings.Cut(target, "/"); ok {
			kind, name = strings.ToLower(k), n
		} else {
			name = k
		}
	}
	switch {
	case keptRunning[kind]:
		t.halted(x.stmt, "it follows until it is stopped, and stopping it (Ctrl-C) ends the script", "drop what follows it if it was never meant to run, or run it in the background (&)")
	case kind == "job" || kind == "jobs" || t.runJobs[name] && (kind == "pod" || kind == "po" || kind == "pods"):
		// its command ends, and logs -f with it
	default:
		t.mayHalt(x.stmt, "it follows the logs until the container exits: where the container keeps running (a server), it runs until it is stopped, stopping it (Ctrl-C) ends the script, and", "run it in the background (&) if the container keeps running")
	}
}

// keptRunning are the kinds whose pods restart their containers (a
// Deployment's): kubectl logs -f of one follows a server.
var keptRunning = set("deploy", "deployment", "deployments", "sts", "statefulset", "statefulsets", "ds", "daemonset", "daemonsets", "rs", "replicaset", "replicasets", "rc", "replicationcontroller", "replicationcontrollers")

// noStepSplit names kubectl exec $POD … not carried for the true reason,
// khook's having no step for exec, not the word splitting of $POD: quoting
// it would carry nothing (trial 46s68a's D2); so too a word only the run
// knows (kubectl cp ns/`kubectl get pods … | cut …`:/build ./report: trial
// 46s70h's D2, "write the step by hand" of a step khook does not have).
// Only where sub is written before the first such word, which so cannot
// be what it holds.
func (t *translator) noStepSplit(x *cmd, sub string) bool {
	if len(x.split) == 0 && x.ok || !kubectlCommands[sub] || carriedKubectl[sub] {
		return false
	}
	for _, w := range x.words[1:] {
		if t.unknownWord(w) != "" || !t.known(w) {
			return false
		}
		if lit(w) == sub {
			t.account(x.stmt, importer.FateNotCarried, "", "khook has no step for kubectl "+sub+"; "+kubectlAdvice(sub))
			return true
		}
	}
	return false
}

// carriedKubectl are the kubectl commands kubectlSub makes a step of (or
// says are read-only), whatever else a split word would hold.
var carriedKubectl = set("apply", "replace", "create", "delete", "wait", "rollout", "patch", "label", "annotate", "scale", "run", "set", "config", "expose")

// kubectlCommands are kubectl's own commands; any other is a plugin's.
var kubectlCommands = set("create", "expose", "run", "set", "explain", "get", "edit", "delete", "rollout", "scale", "autoscale",
	"certificate", "cluster-info", "top", "cordon", "uncordon", "drain", "taint", "describe", "logs", "attach", "exec", "port-forward",
	"proxy", "cp", "auth", "debug", "events", "diff", "apply", "patch", "replace", "wait", "kustomize", "label", "annotate",
	"completion", "alpha", "api-resources", "api-versions", "config", "plugin", "version", "options")

var currentContext = regexp.MustCompile(`set-context\s+"?\$\(kubectl config current-context\)`)

// setContextNamespace is `kubectl config set-context --current
// --namespace=X` (or the context named by $(kubectl config
// current-context)): kubectl and helm commands after it that name no
// namespace work in X, so it is folded into their steps.
func (t *translator) setContextNamespace(x *cmd, f flags) bool {
	if toolName(x.args[0]) == "oc" && len(f.pos) == 2 && f.pos[0] == "project" {
		// oc project X: the current context's namespace is X (trial 46zd's D4)
		t.ctxNS = f.pos[1]
		t.account(x.stmt, importer.FateFolded, "", "the project "+f.pos[1]+" it switches to is the namespace of the helm and kubectl steps after it that name none")
		return true
	}
	if toolName(x.args[0]) == "kubectl" && len(f.pos) == 2 && f.pos[0] == "ns" && x.ok && f.pos[1] != "-" && len(f.list) == 0 {
		// kubectl ns X, the kubens plugin (kubectl-ns): it sets the current
		// context's namespace as kubens X does (trial 46s69n's D2)
		t.ctxNS = f.pos[1]
		t.account(x.stmt, importer.FateFolded, "", "it sets the current context's namespace (the kubens plugin): "+f.pos[1]+" is the namespace of the helm and kubectl steps after it that name none")
		return true
	}
	ns := f.get("namespace")
	// set-context kind-kind after kind create cluster --name kind: the
	// context the script made current (trial 46zk's D1)
	created := len(f.pos) == 3 && t.cluster.current != "" && "context "+f.pos[2] == t.cluster.current
	if len(f.pos) < 2 || f.pos[0] != "config" || f.pos[1] != "set-context" || ns == "" {
		return false
	}
	if !(f.is("current") || created || currentContext.MatchString(t.text(x.stmt)) || t.namesCurrentContext(x)) {
		t.account(x.stmt, importer.FateReadOnly, "", "it sets the namespace "+ns+" of a kubeconfig context the import cannot tell is the current one: if it is, write namespace: "+ns+" on the steps after it that name none (khook's work in default)")
		return true
	}
	t.ctxNS = ns
	t.account(x.stmt, importer.FateFolded, "", "the namespace "+ns+" it sets on the current context is the namespace of the helm and kubectl steps after it that name none")
	return true
}

// namesCurrentContext: set-context "$KUBE_CTX" of a variable holding
// $(kubectl config current-context) (trial 46ze's D1, OpenEBS on EKS).
func (t *translator) namesCurrentContext(x *cmd) bool {
	for i, w := range x.words {
		if i > 0 && lit(x.words[i-1]) == "set-context" {
			m := regexp.MustCompile(`^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$`).FindStringSubmatch(t.text(w))
			return m != nil && t.ctxVars[m[1]]
		}
	}
	return false
}

func kubectlAdvice(sub string) string {
	switch sub {
	case "exec", "cp", "run", "debug", "attach":
		return "run it as a job: step (a container that does the work) or by hand"
	case "port-forward", "proxy":
		return "it only opens a local connection; nothing to carry for the cluster"
	case "taint", "cordon", "uncordon", "drain":
		return "node operations belong to the cluster's provisioning; a patch: step can set a node's taints"
	case "auth":
		return "auth reconcile writes the RBAC objects of its files: apply them in an apply: step"
	}
	return "write the object it makes as a manifest in an apply: step"
}

// kApply is apply/create/replace -f|-k.
func (t *translator) kApply(x *cmd, f flags) {
	switch extra := f.pos[1:]; {
	case f.pos[0] != "apply" || len(extra) == 0:
	case extra[0] == "view-last-applied":
		t.account(x.stmt, importer.FateReadOnly, "", "it changes nothing in the cluster")
		return
	case extra[0] == "set-last-applied" || extra[0] == "edit-last-applied":
		t.account(x.stmt, importer.FateNotCarried, "", "it edits an object's last-applied annotation, which khook's server-side apply does not use")
		return
	default:
		// kubectl apply -f manifests/*.yaml matching two files: -f takes
		// the first, and kubectl refuses the second.
		t.account(x.stmt, importer.FateNotCarried, "", "kubectl apply refuses arguments that are not flags (error: Unexpected args: "+strings.Join(extra, " ")+"), so the script's command fails; give each file its own -f (a glob: -f DIR, or a loop)")
		return
	}
	if t.renderedApply(x, f) || t.applyPerDir(x, f) || t.chartCRDs(x, f) {
		return
	}
	var srcs []importer.OutSource
	for _, fl := range f.list {
		switch fl.name {
		case "f", "filename":
			for _, p := range strings.Split(fl.val, ",") {
				s, ok := t.manifestSource(x, p, f.is("R", "recursive"))
				if !ok {
					return
				}
				srcs = append(srcs, s...)
			}
		case "k", "kustomize":
			if strings.Contains(fl.val, "://") || strings.HasPrefix(fl.val, "github.com/") {
				t.account(x.stmt, importer.FateNotCarried, "", "a remote kustomization: khook renders local ones; vendor it and use kustomize: DIR")
				return
			}
			if t.computedDir(x, fl.val) || t.writtenKustomization(x, fl.val) {
				return
			}
			srcs = append(srcs, importer.OutSource{Kustomize: t.specPath(fl.val)})
		case "prune":
			t.notCarried(x.stmt, "--prune", "khook prunes what leaves the spec (docs/pruning.md), not by label selector")
		case "force-conflicts":
			t.info(x.stmt, "--force-conflicts", "khook's server-side apply takes the fields of the objects it applies")
		case "force":
			if f.pos[0] == "replace" && fl.val != "false" {
				// trial 46s68i's D7: replace --force carried as a plain apply, silently
				t.info(x.stmt, "--force", "kubectl replace --force deletes each object and creates it again; khook's apply updates it in place (a change the API server refuses as immutable fails the step, unless the step says onImmutable: recreate)")
			}
		case "validate":
			if v := fl.val; v == "false" || v == "ignore" || v == "warn" {
				t.info(x.stmt, "--validate="+v, "khook's apply validates strictly, as kubectl's default does: a field the server does not know fails the plan and the step, where the script went on")
			}
		}
	}
	if len(srcs) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", "no -f or -k: nothing khook can apply")
		return
	}
	for _, s := range srcs {
		if t.absent(x, s) {
			return
		}
	}
	// only a -n the command gives: the namespace config set-context gave
	// the context is a default, and an object's own one wins over it
	// (trial 46s69q's D1: refused, "drop -n argo", of a command with none)
	given := parseFlags(x.args[1:], kubectlValued).get("n", "namespace")
	if srcs = t.otherNamespace(x, given, srcs); len(srcs) == 0 {
		return
	}
	t.liveObjects(x, srcs)
	a := &importer.OutApply{Manifests: srcs, Namespace: f.get("n", "namespace"), ServerSide: f.is("server-side")}
	t.addStep(x.stmt, "apply-"+sourceName(srcs[0]), "", &importer.OutStep{Apply: a})
}

// otherNamespace is srcs without those holding an object whose own
// namespace is not -n's: kubectl refuses such an object (error: the
// namespace from the provided object "awx" does not match the namespace
// "stoa-system") after it applies the others, where khook's step would
// apply it in its own (trial 46s68b's D1: six silent steps, "faithful").
func (t *translator) otherNamespace(x *cmd, ns string, srcs []importer.OutSource) []importer.OutSource {
	if ns == "" || strings.Contains(ns, "${") {
		return srcs
	}
	var names []string
	var out []importer.OutSource
	for _, src := range srcs {
		text, ok := t.sourceText(src)
		if !ok {
			out = append(out, src)
			continue
		}
		if other := objectNamespace(text, ns); other != "" {
			names = append(names, cmpOr(src.File, "the here-document")+" (namespace "+other+")")
			continue
		}
		out = append(out, src)
	}
	if len(names) == 0 {
		return srcs
	}
	what := strings.Join(names, ", ") + words.Plural(len(names), " names", " name") + " a namespace other than -n " + ns + ", which kubectl refuses (error: the namespace from the provided object does not match the namespace \"" + ns + "\")"
	if len(out) == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", what+", so the script's command fails as written: drop -n "+ns+", or the object's namespace, and import again")
		t.failsHere(x, "drop -n or the object's namespace, and import again")
		return nil
	}
	then := "the script goes on past that error"
	if c, _ := x.stmt.Cmd.(*syntax.CallExpr); c != nil && t.errexit && !t.tested[c] {
		then = "under set -e the script stops there"
	}
	t.notCarried(x.stmt, strings.Join(names, ", "), what+" after it applies the others, and "+then+"; the step applies the others")
	t.failsHere(x, "drop -n or the object's namespace, and import again")
	return out
}

// objectNamespace is the first metadata.namespace of text's objects that
// is not ns ("" when none is other).
func objectNamespace(text, ns string) string {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc struct {
			Metadata struct {
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
		}
		if err := dec.Decode(&doc); err != nil {
			return ""
		}
		if n := doc.Metadata.Namespace; n != "" && n != ns && !strings.Contains(n, "${") {
			return n
		}
	}
}

// chartCRDs is `kubectl apply -f DIR/crds` of the chart the script just
// pulled (helm pull --untar): the CRDs applied, upgraded, before the
// chart is installed, as Helm never upgrades a chart's crds/. That is
// what a helm step does with its chart's crds/ by default (crds:
// upgrade, server-side), so the command folds into the chart's step
// (trial 46w's f5-dpf: apply-crds.sh before each release).
func (t *translator) chartCRDs(x *cmd, f flags) bool {
	files := f.all("f", "filename")
	if len(t.pulled) == 0 || len(files) != 1 || path.Base(strings.TrimSuffix(files[0], "/")) != "crds" || f.is("k", "kustomize") {
		return false
	}
	p := t.pulled[len(t.pulled)-1]
	p.Applied = t.loc(x.stmt)
	t.m.ChartCRDs = append(t.m.ChartCRDs, p)
	t.account(x.stmt, importer.FateFolded, "", "the crds/ of chart "+p.Chart+" (pulled at "+p.Loc.String()+"), which khook's helm step of that chart applies and upgrades itself before it installs (crds: upgrade)")
	return true
}

// applyPerDir is kubectl apply -f "manifests/${MODE}/" where the
// variable names one directory among those the repository holds: a step
// per directory, under when: MODE is that one (trial 46x's D1: refused,
// a directory only known when the script runs).
func (t *translator) applyPerDir(x *cmd, f flags) bool {
	files := f.all("f", "filename")
	if len(files) != 1 {
		return false
	}
	p := strings.TrimSuffix(files[0], "/")
	m := varRef.FindStringSubmatchIndex(p)
	if m == nil || strings.Count(p, "${") != 1 || m[1] != len(p) || m[0] > 0 && p[m[0]-1] != '/' {
		return false
	}
	v := t.m.Var(p[m[2]:m[3]])
	if sv := t.vars[p[m[2]:m[3]]]; sv != nil && sv.unknown {
		return false // a loop's variable over a list the run computes: no choice among directories
	}
	parent := p[:m[0]]
	entries, err := os.ReadDir(t.abs(cmp.Or(parent, ".")))
	if v == nil || v.Secret || err != nil {
		return false
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) == 0 || len(dirs) > maxAlts {
		return false
	}
	d := ""
	if v.Default != nil {
		d = *v.Default
	}
	if v.Default != nil && !slices.Contains(dirs, d) {
		// INGRESS_FILE=${INGRESS_FILE:-cfg/ingress.yaml}: a file's path, no
		// choice among directories (trial 46zi's D1)
		return false
	}
	for _, dir := range dirs {
		t.when = append(t.when, "vars.get("+strconv.Quote(v.Name)+", "+strconv.Quote(d)+") == "+strconv.Quote(dir))
		srcs, ok := t.manifestSource(x, parent+dir+"/", f.is("R", "recursive"))
		if ok {
			t.addStep(x.stmt, "apply-"+dir, "", &importer.OutStep{Apply: &importer.OutApply{Manifests: srcs, Namespace: f.get("n", "namespace"), ServerSide: f.is("server-side")}})
		}
		t.when = t.when[:len(t.when)-1]
	}
	t.info(x.stmt, "-f "+files[0], "$"+v.Name+" names one of the directories "+t.display(t.abs(cmp.Or(parent, ".")))+" holds ("+strings.Join(dirs, ", ")+"): a step for each, under when: "+v.Name+" is its name")
	return true
}

// blockVar is a variable the script computes that stands alone on a line
// of a manifest's text: a block of YAML, not a value a variable can give.
func (t *translator) blockVar(text string) *importer.Var {
	for _, line := range strings.Split(text, "\n") {
		ref := strings.TrimSpace(line)
		if m := varRef.FindStringSubmatch(ref); m != nil && m[0] == ref {
			if v := t.m.Var(m[1]); v != nil && v.Computed {
				return v
			}
		}
	}
	return nil
}

// manifestSource is one -f: a file, a directory (its files at import), a
// URL, or - (the heredoc or pipe feeding the command).
func (t *translator) manifestSource(x *cmd, p string, recursive bool) ([]importer.OutSource, bool) {
	switch {
	case p == "-":
		if x.stdin == nil || x.stdin.src == nil {
			t.account(x.stmt, importer.FateNotCarried, "", "the manifests it reads on its standard input are not known at import")
			return nil, false
		}
		if x.stdin.src.Inline != "" && !x.stdin.known {
			t.account(x.stmt, importer.FateNotCarried, "", "the here-document it reads has a part only known when the script runs ("+x.stdin.why+")")
			return nil, false
		}
		if v := t.blockVar(x.stdin.src.Inline); v != nil {
			// realm:\n$YAML_DATA, yq's output: YAML the run makes (trial
			// 46zx's D3: "fix the manifest", of a manifest with nothing to fix)
			t.account(x.stmt, importer.FateNotCarried, "", "the here-document holds $"+v.Name+" on a line of its own, YAML the script computes when it runs ("+v.From.String()+"): the object is only known then; commit it as a manifest and apply that file")
			return nil, false
		}
		return []importer.OutSource{*x.stdin.src}, true
	case strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://"), t.urlVar(p):
		return []importer.OutSource{{URL: p}}, true
	}
	if u := t.downloaded(p); u != "" {
		t.info(x.stmt, p, "the script downloads it from "+u+": the step applies the URL, as it is when the step runs")
		return []importer.OutSource{{URL: u}}, true
	}
	if orig := t.copied(p); orig != "" {
		t.info(x.stmt, p, "a copy the script makes of "+t.display(orig)+": the step reads that file")
		return []importer.OutSource{{File: t.specPath(orig)}}, true
	}
	if text, wrote, ok := t.readWritten(x, p); wrote {
		return []importer.OutSource{{Inline: text}}, ok
	}
	if name := t.computedIn(p); name != "" {
		// TEMP_PATH=$(mktemp -d); cp/sed into it; kubectl apply -f "$TEMP_PATH/x.yaml"
		t.account(x.stmt, importer.FateNotCarried, "", p+" is under $"+name+", which the script computes when it runs ("+t.vars[name].decl.From.String()+"): the file is made then, not in the repository khook reads; commit it, and apply that file")
		return nil, false
	}
	abs := t.abs(p)
	if d := t.defaultPath(p); d != "" {
		// -f "${CONFIG_DIR}" of a directory by default (trial 46s67e's D2:
		// written as one file, which validate refused)
		abs = d
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		if b, err := readFile(abs); err == nil && strings.TrimSpace(string(b)) == "" {
			// a committed empty file (what a command the script runs
			// would write: trial 46zz's D1): kubectl finds no object
			t.account(x.stmt, importer.FateNotCarried, "", p+" is empty at import, so kubectl fails there (no objects passed to apply): commit the manifests it should hold")
			t.failsHere(x, "commit the manifests and import again")
			return nil, false
		} else if err == nil && noKind(b) {
			// a helm values file applied by kubectl (trial 46s67i's D4:
			// validate's refusal pasted the document as escaped JSON)
			t.account(x.stmt, importer.FateNotCarried, "", p+" holds no Kubernetes object (no kind), so kubectl fails there too: a helm values file? give it to its helm install with -f, or drop the line")
			t.failsHere(x, "drop the line or apply a manifest, and import again")
			return nil, false
		} else if err == nil && kustomizeConfig(b) {
			// a kustomize.config.k8s.io Kustomization by -f (trial 46s69n's
			// D4): no API server serves it, so kubectl refuses it
			t.account(x.stmt, importer.FateNotCarried, "", p+" is a kustomize config (kustomize.config.k8s.io), which no API server serves, so kubectl apply -f refuses it there: name it kustomization.yaml in a folder of its own and apply that folder with -k")
			t.failsHere(x, "apply it with -k, and import again")
			return nil, false
		}
		return []importer.OutSource{{File: t.specPath(p)}}, true
	}
	return t.dirSources(x, p, abs, recursive)
}

// dirSources is -f DIR: the manifests directory abs (p as the script
// names it) holds at import.
func (t *translator) dirSources(x *cmd, p, abs string, recursive bool) ([]importer.OutSource, bool) {
	var files []string
	_ = filepath.WalkDir(abs, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && path != abs && !recursive {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); !d.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	if len(files) == 0 {
		// kubectl reads a folder's sub-folders only with -R (46zzb's N1)
		t.account(x.stmt, importer.FateNotCarried, "", "directory "+p+" holds no manifests at import"+map[bool]string{false: " (kubectl reads its sub-folders only with -R)"}[recursive]+", so kubectl fails there (no objects passed to apply)")
		made := t.madeBy(abs) != ""
		for k := range t.wrote {
			made = made || within(k, abs)
		}
		if !made { // a folder the script fills first may hold some when it runs
			t.failsHere(x, "commit the manifests (or add -R) and import again")
		}
		return nil, false
	}
	var out []importer.OutSource
	var refused, kust []string
	for _, file := range files {
		rel, _ := filepath.Rel(abs, file)
		if base := filepath.Base(file); (base == "kustomization.yaml" || base == "kustomization.yml") && t.wrote[t.writeKey(file)] == nil {
			// kubectl apply -f sends it as an object of kind
			// Kustomization, which no cluster serves (trial 46s70s's D1:
			// "has no metadata.name … fix the manifest", false)
			kust = append(kust, filepath.ToSlash(filepath.Join(p, rel)))
			continue
		}
		if b, err := readFile(file); err == nil && t.wrote[t.writeKey(file)] == nil && noKind(b) {
			refused = append(refused, filepath.ToSlash(filepath.Join(p, rel)))
			continue
		}
		if t.wrote[t.writeKey(file)] != nil {
			// sed -i deploy/binding.yaml, then apply -f deploy/: the edited text
			rel, _ := filepath.Rel(abs, file)
			srcs, ok := t.manifestSource(x, filepath.Join(p, rel), false)
			if !ok {
				return nil, false
			}
			out = append(out, srcs...)
			continue
		}
		out = append(out, importer.OutSource{File: t.specPath(filepath.Join(p, rel))}) // ${DIR}/x.yaml stays under ${DIR}
	}
	if !t.refusedFiles(x, p, refused, len(out), refusal{" no Kubernetes object (no kind)", "a helm values file? give it to its helm install with -f, or drop the line", "drop the line or apply a manifest, and import again", "move them out of " + p}) ||
		!t.refusedFiles(x, p, kust, len(out), refusal{" a kustomization, which kubectl apply -f sends as an object of kind Kustomization (no matches for kind \"Kustomization\")", "write kubectl apply -k " + p + " to apply it", "write kubectl apply -k " + p + " and import again", "write kubectl apply -k " + p + " instead"}) {
		return nil, false
	}
	why := "a directory: its " + itoa(len(out)) + " manifests at import are listed; a file added later is not applied until it is added to the step (or make the directory a kustomization)"
	if abs != t.abs(p) {
		why += "; they are the default's, and a run that sets " + varRef.FindString(p) + " reads the same names there"
	}
	t.info(x.stmt, "kubectl apply -f "+p, why)
	return out, true
}

// refusal is why kubectl refuses files of a directory it applies: what
// they hold, what to do where nothing else is there, the fix for a
// script that set -e stops there, and what to do where others are.
type refusal struct{ holds, none, fix, some string }

// refusedFiles says the files of -f DIR kubectl refuses (no kind; a
// kustomization.yaml): with nothing else there the command is not
// carried; beside others kubectl applies those, then fails, and so does
// the step carry them. False: not carried.
func (t *translator) refusedFiles(x *cmd, p string, refused []string, kept int, r refusal) bool {
	if len(refused) == 0 {
		return true
	}
	what := strings.Join(refused, ", ") + words.Plural(len(refused), " holds", " hold") + r.holds
	if len(refused) == 1 && strings.HasPrefix(r.holds, " a ") {
		what = refused[0] + " is" + r.holds
	}
	if kept == 0 {
		t.account(x.stmt, importer.FateNotCarried, "", what+", so kubectl fails there: "+r.none)
		t.failsHere(x, r.fix)
		return false
	}
	c, _ := x.stmt.Cmd.(*syntax.CallExpr)
	then := "the script goes on past that error"
	if c != nil && t.errexit && !t.tested[c] {
		then = "under set -e the script stops there"
	}
	t.info(x.stmt, "kubectl apply -f "+p, what+": kubectl refuses "+words.Plural(len(refused), "it", "them")+" after it applies the others, and "+then+"; the step applies the others ("+strings.ReplaceAll(r.some, "them", words.Plural(len(refused), "it", "them"))+" and the command succeeds)")
	t.failsHere(x, strings.ReplaceAll(r.some, "them", words.Plural(len(refused), "it", "them"))+", and import again")
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }

// urlVar: p is one variable whose default is a URL
// (URL="${URL:-https://…/op.yaml}"; kubectl apply -f "$URL").
func (t *translator) urlVar(p string) bool {
	m := varRef.FindStringSubmatch(p)
	if m == nil || m[0] != p {
		return false
	}
	v := t.m.Var(m[1])
	return v != nil && v.Default != nil && (strings.HasPrefix(*v.Default, "https://") || strings.HasPrefix(*v.Default, "http://"))
}

// varRef is a khook variable's ${NAME} in text the import wrote.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// computedIn is the first variable in path the script sets from what it
// computes when it runs ($(mktemp -d), a command's output), "" when none;
// not a loop's variable nor one set under a condition khook cannot
// decide, whose files may well be in the repository.
func (t *translator) computedIn(path string) string {
	for _, m := range varRef.FindAllStringSubmatch(path, -1) {
		if v := t.vars[m[1]]; v != nil && v.unknown && v.decl != nil && v.decl.Computed && !v.decl.Secret {
			return m[1]
		}
	}
	return ""
}

// computedDir names an apply -k of a directory under one the script
// computes when it runs (T=$(mktemp -d); cp -r overlay "$T"; sed -i …
// "$T/overlay/kustomization.yaml"), with the lines that make and edit it
// (trial 46s67h's D4: a placeholder path refused by the spec's check).
func (t *translator) computedDir(x *cmd, dir string) bool {
	name := t.computedIn(dir)
	if name == "" {
		return false
	}
	var by []string
	ref := regexp.MustCompile(`\$\{?` + name + `\b`)
	for _, n := range t.m.NotCarried { // the cp, sed and find into it, not carried
		if ref.MatchString(n.What) && !slices.Contains(by, n.Loc.String()) {
			by = append(by, n.Loc.String())
		}
	}
	made := ""
	if len(by) > 0 {
		made = ", filled and edited at " + strings.Join(by, ", ")
	}
	t.account(x.stmt, importer.FateNotCarried, "", dir+" is under $"+name+", which the script makes when it runs ("+t.vars[name].decl.From.String()+made+"): the kustomization is made then, not in the repository khook reads; commit it as the script makes it, and apply that directory")
	return true
}

// writtenKustomization names an apply -k of a directory whose
// kustomization the script writes (cat <<EOF >> DIR/kustomization.yaml)
// at the line that writes it: khook's kustomize: renders a directory of
// the repository, which lacks it (trial 46s67h's D1: "no step reads the
// file it writes" and "fix the kustomization", with this machine's paths).
func (t *translator) writtenKustomization(x *cmd, dir string) bool {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := strings.TrimSuffix(dir, "/") + "/" + name
		w := t.wrote[t.writeKey(p)]
		if w == nil || w.from != "" || w.url != "" || w.tmpl != nil {
			continue
		}
		w.read = true
		where := ", not in the repository,"
		if exists(t.writeKey(p)) {
			where = ", over the committed one,"
		}
		why := p + " is written by the script at " + w.at.String() + where + " and khook's kustomize: step renders the directory as committed: commit that kustomization"
		var vars []string
		for _, m := range varRef.FindAllStringSubmatch(w.text, -1) {
			if !slices.Contains(vars, "$"+m[1]) {
				vars = append(vars, "$"+m[1])
			}
		}
		switch {
		case !w.known:
			why += " (its text is only known when the script runs: " + w.why + ")"
		case len(vars) > 0:
			why += ", with the value the run gives " + strings.Join(vars, ", ")
		}
		t.account(x.stmt, importer.FateNotCarried, "", why+", and apply that directory")
		return true
	}
	return false
}

// missing is a local file: or kustomize: source that is not there at
// import, as its path on this machine ("" when it is there, remote, or
// only known when the script runs).
func (t *translator) missing(src importer.OutSource) string {
	p := src.File + src.Kustomize
	if p == "" || strings.Contains(p, "${") {
		return ""
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(t.specDir, p)
	}
	if _, err := os.Stat(abs); err == nil {
		return ""
	}
	return abs
}

// absent names an apply not carried when a manifest it reads is not there
// at import (kube-prometheus's manifests/setup, made by its build): khook
// validates and plans every manifest before the run, so such a step would
// make the spec invalid. When the script makes the path earlier, that
// command is named.
func (t *translator) absent(x *cmd, src importer.OutSource) bool {
	abs := t.missing(src)
	if abs == "" {
		return t.fillsKustomization(x, src)
	}
	why := t.display(abs) + " does not exist when the import runs, so khook cannot read it; "
	switch by := t.madeBy(abs); {
	case strings.Contains(by, "kubectl get"):
		why += "the script makes it earlier (" + by + ") from what the cluster holds when it runs, which khook does not read: write the object it means as a manifest (or the change as a patch: step)"
	case by != "":
		why += "the script makes it earlier (" + by + "), which khook does not run: generate it and commit it, or import again once it exists"
	case t.cwdUnknown != "":
		why = "its file is relative to a directory known only when the script runs (the cd at " + t.cwdUnknown + "), so khook cannot read it: commit the file and point the step at it"
	case outside(t.runDir, abs) && slices.ContainsFunc(x.args, func(a string) bool { return strings.HasSuffix(a, abs) }):
		// /home/ubuntu/galaxy-pvc.yaml, written so: a file of the machine
		// the script runs on, shown as written; --dir cannot help (trial 46s68h's D2,
		// as notSourced says of a source there)
		why = abs + ", a file of the machine the script runs on, not of the checkout, does not exist when the import runs, so khook cannot read it: commit the file and point the step at it, or import where the file is"
	default:
		// manifests/01-namespace.yaml that no commit ever had (trial 46zr's
		// N1): bash's apply fails there too, unless the run makes it
		why += "nothing in the script makes it, so bash's command fails too unless the file is placed before the script runs: check the path, or run the import from where the script runs (--dir)"
	}
	t.account(x.stmt, importer.FateNotCarried, "", why)
	return true
}

// outside is whether abs is outside dir (the directory the import reads).
func outside(dir, abs string) bool {
	rel, err := filepath.Rel(dir, abs)
	return err != nil || rel == ".." || strings.HasPrefix(rel, "../")
}

// fillsKustomization names an apply -k of a kustomization the script
// fills first with a file not there at import (cp vendor/x.yaml deps/ms/):
// khook renders the kustomization as committed, which lacks it.
func (t *translator) fillsKustomization(x *cmd, src importer.OutSource) bool {
	if src.Kustomize == "" || strings.Contains(src.Kustomize, "${") || strings.Contains(src.Kustomize, "://") {
		return false
	}
	dir := src.Kustomize
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(t.specDir, dir)
	}
	for _, m := range t.made {
		if m.path != dir && within(m.path, dir) && !exists(m.path) {
			t.account(x.stmt, importer.FateNotCarried, "", t.display(m.path)+" is not in the kustomization at import: the script makes it earlier ("+m.at.String()+" "+m.name+"), which khook does not run; commit it, or import again once it exists")
			return true
		}
	}
	for p, w := range t.wrote {
		if w.edited && within(p, dir) && exists(p) {
			// sed -i openhim/config.json, then kubectl apply -k openhim
			// (trial 46zl's D2): khook would apply the file unedited
			w.read = true
			t.account(x.stmt, importer.FateNotCarried, "", t.display(p)+", a file of the kustomization, is edited by the script first ("+w.at.String()+"), which khook does not do to a kustomization's files: commit the edit, or write it as a kustomize patch")
			return true
		}
	}
	return false
}

// sourceName names an apply step after what it applies.
func sourceName(s importer.OutSource) string {
	switch {
	case s.File != "":
		return strings.TrimSuffix(filepath.Base(s.File), filepath.Ext(s.File))
	case s.Kustomize != "":
		return filepath.Base(s.Kustomize)
	case s.URL != "":
		return strings.TrimSuffix(filepath.Base(s.URL), filepath.Ext(s.URL))
	}
	var obj struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
	}
	if yaml.Unmarshal([]byte(firstDoc(s.Inline)), &obj) == nil && obj.Kind != "" {
		return obj.Kind + "-" + obj.Metadata.Name
	}
	return "manifests"
}

func firstDoc(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "---")
	if i := strings.Index(s, "\n---"); i >= 0 {
		return s[:i]
	}
	return s
}

// target is TYPE/NAME from `TYPE NAME` or `TYPE/NAME`.
func target(pos []string) (string, bool) {
	switch {
	case len(pos) == 1 && strings.Contains(pos[0], "/"):
		return pos[0], true
	case len(pos) == 2 && !strings.Contains(pos[0], "/"):
		return pos[0] + "/" + pos[1], true
	}
	return "", false
}

// sourceText is a manifest source's text the import can read: inline, or
// its file's.
func (t *translator) sourceText(src importer.OutSource) (string, bool) {
	if src.File == "" {
		return src.Inline, true
	}
	if strings.HasPrefix(src.File, "${") {
		return "", false
	}
	b, err := readFile(filepath.Join(t.specDir, filepath.FromSlash(src.File)))
	return string(b), err == nil
}

// liveObjects says an applied file exported from a cluster (kubectl get -o
// yaml: metadata.resourceVersion set): the API server refuses to create an
// object that has one, so the script fails at this line where the object
// is not there (after its own delete: trial 46s69k's D2), and khook's
// apply, which sends it as written, fails too, there or once it changed.
func (t *translator) liveObjects(x *cmd, srcs []importer.OutSource) {
	for _, src := range srcs {
		text, ok := t.sourceText(src)
		if !ok || src.File == "" {
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for obj := map[string]any(nil); dec.Decode(&obj) == nil; obj = nil {
			md, _ := obj["metadata"].(map[string]any)
			if rv, ok := md["resourceVersion"]; ok && rv != nil && rv != "" {
				t.info(x.stmt, t.text(x.stmt), src.File+" holds "+fmt.Sprint(obj["kind"], " ", md["name"])+" as exported from a cluster (metadata.resourceVersion "+fmt.Sprint(rv)+"): the API server refuses to create an object with a resourceVersion, so the script fails here where it is not there, and so does the step: remove resourceVersion, uid, selfLink and creationTimestamp from the file")
				return
			}
		}
	}
}
