package shscript

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/strvals"

	"github.com/khook/khook/internal/importer"
)

// helm is one helm command.
func (t *translator) helm(x *cmd) {
	f := parseFlags(x.args[1:], helmValued)
	t.subcommandDefault(x, f.pos)
	if t.installOrUpgrade(x, f.pos) {
		f.list = append(f.list, flag{name: "install"})
	}
	if len(f.pos) == 0 {
		t.account(x.stmt, importer.FateReadOnly, "", "helm without a command changes nothing")
		return
	}
	if helmReadOnly[f.pos[0]] {
		if (f.pos[0] == "pull" || f.pos[0] == "fetch") && f.is("untar") && len(f.pos) == 2 {
			// its crds/ applied next is what crds: upgrade does (kApply)
			t.pulled = append(t.pulled, importer.PulledChart{Chart: f.pos[1], Version: f.get("version"), Loc: t.loc(x.stmt)})
		} else if f.pos[0] == "pull" || f.pos[0] == "fetch" {
			t.pullPackage(x, f)
		} else if key := t.outFile(x); key != "" && (f.pos[0] == "show" || f.pos[0] == "inspect") && len(f.pos) == 3 && f.pos[1] == "values" {
			// helm show values C > values.yaml: the file is C's defaults
			// from here on, not the committed one (trial 46s67m's D1, two W)
			t.wrote[key] = &written{known: true, defaults: f.pos[2], at: t.loc(x.stmt)}
		}
		t.account(x.stmt, importer.FateReadOnly, "", "it changes nothing in the cluster")
		return
	}
	if t.splitUnknown(x) {
		return
	}
	if !x.ok && f.pos[0] != "repo" {
		t.account(x.stmt, importer.FateNotCarried, "", "an argument is only known when the script runs ("+x.why+"); write the step by hand")
		return
	}
	t.cluster.cmd = t.cluster.of(t.contextAsRun(x, f.get("kube-context")), f.get("kubeconfig"))
	switch sub := f.pos[0]; sub {
	case "repo":
		t.helmRepo(x, f)
	case "upgrade", "install", "template":
		if sub == "template" {
			if !t.renders(x, f) {
				t.account(x.stmt, importer.FateReadOnly, "", "helm template prints manifests; piped into kubectl apply it becomes a helm step")
			}
			return
		}
		t.helmInstall(x, f, sub)
	case "dependency", "dep", "dependencies":
		t.helmDeps(x, f)
	case "uninstall", "delete", "del", "un":
		if len(f.pos) < 2 {
			t.account(x.stmt, importer.FateNotCarried, "", "no release named")
			return
		}
		ns := f.get("n", "namespace")
		if ns == "" {
			ns = t.ctxNS // helm, too, takes the current context's namespace
		}
		before := len(t.m.Steps)
		for _, rel := range f.pos[1:] {
			no := f.is("ignore-not-found")
			t.addStep(x.stmt, "uninstall-"+rel, "", &importer.OutStep{Delete: &importer.OutDelete{Release: rel, Namespace: ns, IgnoreNotFound: &no}})
		}
		if ns == "" {
			t.contextNamespace(x, "helm", t.m.Steps[before:])
		}
	case "init":
		t.helm2 = true // the script runs Helm 2 itself: its --name and namespaces are Helm 2's
		t.account(x.stmt, importer.FateNotCarried, "", "Helm 2's tiller: khook installs with Helm 4, which needs no tiller; drop it")
	case "reset":
		// helm reset --force: Helm 2's own command, removing tiller (trial
		// 46s70f's D5: called a plugin's, with a plugin's advice)
		t.account(x.stmt, importer.FateNotCarried, "", "Helm 2's helm reset, which removes its tiller from the cluster: khook installs with Helm 4, which has no tiller (Helm 3 and 4 have no reset command); drop it")
	case "registry":
		t.helmRegistry(x)
	case "plugin":
		if len(f.pos) > 2 && f.pos[1] == "install" && strings.Contains(f.pos[2], "helm-git") {
			t.account(x.stmt, importer.FateFolded, "", "khook reads helm-git's git+https:// chart repositories itself, with no plugin")
			break
		}
		if len(f.pos) > 2 && f.pos[1] == "install" {
			t.plugins = append(t.plugins, strings.TrimPrefix(strings.TrimSuffix(filepath.Base(f.pos[2]), ".git"), "helm-"))
		}
		t.account(x.stmt, importer.FateNotCarried, "", "khook runs no helm plugins; a post-renderer or a job: step may do what it did")
	default:
		if !helmCommands[sub] && (slices.Contains(t.plugins, sub) || sub == "spray" || sub == "diff" || sub == "secrets") {
			// helm spray . (trial 46zd's D1): a plugin's command
			t.account(x.stmt, importer.FateNotCarried, "", "helm "+sub+" is a helm plugin's command, which khook does not run: write what it installs as helm steps (helm spray: one per subchart, in its order)")
			return
		}
		if !helmCommands[sub] && (sub == "update" || sub == "add" || sub == "index") {
			t.account(x.stmt, importer.FateNotCarried, "", "helm has no "+sub+" command, so the script's command fails (helm repo "+sub+"?); drop it")
			return
		}
		if !helmCommands[sub] {
			// helm deploy … local/onap: ONAP's deploy plugin installs ONAP
			// (trial 46s67g's D1: "drop it" lost the whole install)
			t.pluginRuns = append(t.pluginRuns, len(t.m.Commands))
			t.account(x.stmt, importer.FateNotCarried, "", "helm "+sub+" is not one of helm's own commands: a plugin's (the machine's helm has it installed, as ONAP's helm deploy), which khook does not run: write what it installs as helm steps, or run it in a job: step")
			return
		}
		t.account(x.stmt, importer.FateNotCarried, "", "khook has no step for helm "+sub+"; do it by hand")
	}
}

// installOrUpgrade reads `helm "$action" …`, action install or upgrade as
// a check decides when the script runs (if helm status …; then
// action=upgrade), as upgrade --install: what a helm step does either way
// (trial 46zc's D6, a GPU operator installer).
func (t *translator) installOrUpgrade(x *cmd, pos []string) bool {
	if len(pos) == 0 {
		return false
	}
	m := varRef.FindStringSubmatch(pos[0])
	if m == nil || m[0] != pos[0] {
		return false
	}
	v := t.vars[m[1]]
	if v == nil || !v.unknown || (v.was != "install" && v.was != "upgrade") {
		return false
	}
	t.info(x.stmt, pos[0], "install or upgrade, as $"+m[1]+" says when the script runs: khook's helm step installs the release or upgrades it")
	for i, a := range x.args {
		if a == pos[0] {
			x.args[i] = "upgrade"
			break
		}
	}
	pos[0] = "upgrade"
	return true
}

// helmCommands are helm's commands and their aliases (Helm 3 and 4).
var helmCommands = set("completion", "create", "dependency", "dep", "dependencies", "env", "get", "help", "history", "hist",
	"install", "lint", "list", "ls", "package", "plugin", "pull", "fetch", "push", "registry", "repo", "rollback", "search",
	"show", "inspect", "status", "template", "test", "uninstall", "del", "delete", "un", "upgrade", "verify", "version", "init")

func (t *translator) helmRepo(x *cmd, f flags) {
	if len(f.pos) >= 4 && f.pos[1] == "add" {
		t.repos[f.pos[2]] = f.pos[3]
		delete(t.repoAuth, f.pos[2])
		if f.get("username") == "" && f.get("password") == "" && !f.is("password-stdin") {
			t.account(x.stmt, importer.FateFolded, "", "its URL goes into the repo: of the steps that install from "+f.pos[2])
			t.repoAdds = append(t.repoAdds, repoAdd{at: t.loc(x.stmt), name: f.pos[2], url: f.pos[3]})
			return
		}
		au, why := t.login(x, f, "helm repository "+f.pos[2], "HELM_REPO_"+varName(f.pos[2]))
		if au == nil {
			t.account(x.stmt, importer.FateNotCarried, "", "a private repository, "+why+": add auth: with secret variables to the steps that install from "+f.pos[2])
			return
		}
		t.repoAuth[f.pos[2]] = au
		t.account(x.stmt, importer.FateFolded, "", "its URL and credentials go into the repo: and auth: of the steps that install from "+f.pos[2])
		return
	}
	if len(f.pos) >= 2 && (f.pos[1] == "update" || f.pos[1] == "up") {
		t.account(x.stmt, importer.FateFolded, "", "khook reads the repository's index when a step installs from it")
		t.repoUpdates = append(t.repoUpdates, t.loc(x.stmt))
		return
	}
	t.account(x.stmt, importer.FateReadOnly, "", "it changes only helm's local repository list")
}

// registryValued are helm registry login's flags that take a value.
var registryValued = func() map[string]bool {
	m := maps.Clone(helmValued)
	m["u"], m["p"] = true, true
	return m
}()

// helmRegistry is `helm registry login HOST`: helm keeps the login for the
// host, so its credentials go into auth: of each step after it that
// installs an oci:// chart from HOST; logout ends that.
func (t *translator) helmRegistry(x *cmd) {
	f := parseFlags(x.args[1:], registryValued)
	if len(f.pos) < 3 || (f.pos[1] != "login" && f.pos[1] != "logout") {
		t.account(x.stmt, importer.FateNotCarried, "", "helm registry takes login or logout and a registry host")
		return
	}
	host := f.pos[2]
	if v := t.m.Var(strings.TrimSuffix(strings.TrimPrefix(host, "${"), "}")); v != nil && v.Default != nil && isRef(host) {
		host = *v.Default // AC_REGISTRY=${AC_REGISTRY:-dp.apps.rancher.io}: the charts name the host itself
	}
	host = registryHost(host)
	if f.pos[1] == "logout" {
		delete(t.registries, host)
		t.account(x.stmt, importer.FateFolded, "", "the steps after it carry no credentials for "+host)
		return
	}
	au, why := t.login(x, f, "registry "+host, registryVar(host))
	if au == nil {
		t.account(x.stmt, importer.FateNotCarried, "", "registry credentials, "+why+": add auth: with secret variables to the steps that install from "+host)
		return
	}
	t.registries[host] = au
	t.m.Logins = append(t.m.Logins, importer.Login{Host: host, Auth: *au, Loc: t.loc(x.stmt)})
	t.account(x.stmt, importer.FateFolded, "", "its credentials go into auth: of the steps that install oci:// charts from "+host)
}

// registryVar names a registry's variables: nvcr.io → REGISTRY_NVCR,
// localhost:5000 → REGISTRY_LOCALHOST_5000, an ECR host by its region
// (its account number and top-level domain left out).
func registryVar(host string) string {
	labels := strings.Split(host, ".")
	for len(labels) > 1 && strings.Trim(labels[0], "0123456789") == "" {
		labels = labels[1:]
	}
	if len(labels) > 1 && !strings.ContainsAny(labels[len(labels)-1], "0123456789:") {
		labels = labels[:len(labels)-1]
	}
	name := varName(strings.Join(labels, "_"))
	if strings.HasPrefix(name, "REGISTRY") {
		return name
	}
	return "REGISTRY_" + name
}

// computedPrefix marks an input only a command's run makes (its text after).
const computedPrefix = "computed: "

// registryHost is a registry as helm logs in to it: its host[:port].
func registryHost(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(s, "oci://"), "https://"), "http://")
	host, _, _ := strings.Cut(s, "/")
	return host
}

// login is the credentials a command passes (--username/-u with
// --password/-p or --password-stdin): the password a secret variable
// (prefix_PASSWORD when the script writes it), never its value; each
// required unless it has a default, as auth: needs both. nil says why not.
func (t *translator) login(x *cmd, f flags, what, prefix string) (*importer.OutAuth, string) {
	user, pass := f.get("username", "u"), f.get("password", "p")
	if f.is("password-stdin") {
		switch {
		case x.stdin != nil && strings.HasPrefix(x.stdin.why, computedPrefix):
			// a token a command makes when the script runs
			cmd := strings.TrimPrefix(x.stdin.why, computedPrefix)
			pass = t.ref(&importer.Var{Name: prefix + "_PASSWORD", Secret: true, Required: true, Computed: true, From: t.loc(x.stmt),
				Description: "the password of " + what + ", which the script gets from " + cmd + " when it runs"})
			t.info(x.stmt, "--password-stdin", "the script gets the password from "+cmd+" when it runs; khook asks for it: KHOOK_SECRET_"+prefix+"_PASSWORD=$("+cmd+")")
		case x.stdin == nil || !x.stdin.known:
			return nil, "the password it reads on its standard input is only known when the script runs"
		default:
			pass = strings.TrimSuffix(x.stdin.text, "\n")
		}
	}
	if user == "" || pass == "" {
		return nil, "not both a username and a password"
	}
	un, ok1 := t.credential(x, user, false, prefix+"_USERNAME", "the username of "+what)
	pn, ok2 := t.credential(x, pass, true, prefix+"_PASSWORD", "the password of "+what)
	if !ok1 || !ok2 {
		return nil, "a credential built of several values"
	}
	au := &importer.OutAuth{Username: user, Password: "${" + pn + "}"}
	if un != "" {
		au.Username = "${" + un + "}"
	}
	for _, n := range []string{un, pn} {
		if v := t.m.Var(n); v != nil && v.Default == nil {
			v.Required = true
		}
	}
	return au, ""
}

func (t *translator) helmDeps(x *cmd, f flags) {
	dir := "."
	if len(f.pos) >= 3 {
		dir = f.pos[2]
	}
	if len(f.pos) >= 2 && (f.pos[1] == "update" || f.pos[1] == "up") {
		t.depUpdate[t.abs(dir)] = true
		t.account(x.stmt, importer.FateFolded, "", "dependencyUpdate: true on the helm step that installs "+t.specPath(dir))
	} else {
		t.account(x.stmt, importer.FateFolded, "", "khook builds a local chart's dependencies from its Chart.lock itself")
	}
	t.deps = append(t.deps, depCmd{chart: t.specPath(dir), cmd: len(t.m.Commands) - 1})
}

// depCmd is a helm dependency command: the chart folder, its Commands entry.
type depCmd struct {
	chart string
	cmd   int
}

// depsInstalled makes a helm dependency command folded into no step (no
// step installs its chart: trial 46zd's D1, whose chart helm spray
// installs) read-only: it only fetches into the chart's folder.
func (t *translator) depsInstalled() {
	for _, d := range t.deps {
		installed := slices.ContainsFunc(t.m.Steps, func(st *importer.Step) bool {
			return st.Out.Helm != nil && filepath.Clean(st.Out.Helm.Chart) == filepath.Clean(d.chart)
		})
		if c := &t.m.Commands[d.cmd]; !installed && c.Fate == importer.FateFolded {
			c.Fate, c.Why = importer.FateReadOnly, "it fetches the dependencies into the chart's folder "+d.chart+", which no step installs"
		}
	}
}

// pluginsBeforeCharts revises the note of a helm plugin's command the
// import cannot read when a local chart is installed after it: such a
// plugin writes into the chart (helm cheetah-config-creator … then helm
// upgrade --install … ./chart), which neither a helm step nor a job can
// do (trial 46s68e's D2: "write what it installs as helm steps").
func (t *translator) pluginsBeforeCharts() {
	for _, i := range t.pluginRuns {
		if i >= len(t.m.Commands) || t.m.Commands[i].Fate != importer.FateNotCarried {
			continue
		}
		c := &t.m.Commands[i]
		j := slices.IndexFunc(t.m.Steps, func(st *importer.Step) bool {
			h := st.Out.Helm
			return h != nil && st.From.File == c.File && st.From.Line > c.Line &&
				(strings.HasPrefix(h.Chart, "./") || strings.HasPrefix(h.Chart, "../") || strings.HasPrefix(h.Chart, "/"))
		})
		if j < 0 {
			continue
		}
		st := t.m.Steps[j]
		sub := strings.Fields(c.Text + " x")[1]
		why := "helm " + sub + " is a helm plugin's command, which khook does not run; it changes files of the checkout, and the chart step at " + st.From.String() + " installs " + st.Out.Helm.Chart + " as it is at import: run it before khook (in CI) and import again"
		for k := range t.m.NotCarried {
			if n := &t.m.NotCarried[k]; n.Loc == c.Loc && n.Why == c.Why {
				n.Why = why
			}
		}
		c.Why = why
	}
}

// helmInstall is upgrade --install, install, and helm template piped into
// kubectl apply (sub "template").
func (t *translator) helmInstall(x *cmd, f flags, sub string) {
	pos := t.emptyByDefault(x, f.pos[1:])
	rel, chart, helm2 := "", "", false
	ns := f.get("n", "namespace")
	switch {
	case f.is("generate-name", "g"):
		t.account(x.stmt, importer.FateNotCarried, "", "a release without a name (--generate-name): give the step a release name by hand")
		return
	case sub == "template" && f.get("show-only", "s") != "":
		// helm template --show-only templates/prometheus-rule.yaml cnpg/cluster
		// | kubectl apply: one object of the chart, which a helm step
		// installs whole (trial 46s70i's N4: a whole CNPG cluster)
		t.account(x.stmt, importer.FateNotCarried, "", "it applies only "+f.get("show-only", "s")+" of the chart, and a helm step installs the whole chart: render that template (helm template … --show-only …), commit it and apply the file")
		return
	case len(pos) > 2 && strings.Contains(strings.Join(pos[2:], " "), "${"):
		// helm upgrade x ./app $EXTRA, EXTRA from a file: which words it
		// makes (flags, or nothing) only the run knows
		t.account(x.stmt, importer.FateNotCarried, "", "the words of "+strings.Join(pos[2:], " ")+" are only known when the script runs: bash splits its value into flags or arguments then; write the step by hand")
		return
	case len(pos) > 2:
		t.account(x.stmt, importer.FateNotCarried, "", "helm "+sub+" takes a release and a chart, and refuses the other arguments ("+strings.Join(pos[2:], " ")+"), so the script's command fails")
		return
	case len(pos) == 2:
		rel, chart = pos[0], pos[1]
	case len(pos) == 1 && f.get("name") != "":
		// helm install --name X CHART: Helm 2's form; Helm 3 and 4 have no --name
		rel, chart, helm2 = f.get("name"), pos[0], true
		if !t.helm2 {
			t.notCarried(x.stmt, "--name "+rel, "Helm 3 and 4 have no --name (Helm 2's form: unknown flag), so the script's command fails as written; the step installs the release "+rel+": write helm install "+rel+" CHART in the script")
		}
	case len(pos) == 1 && f.get("n") != "" && (t.helm2 || f.get("namespace") != ""):
		// helm install CHART -n X --namespace NS: Helm 2's -n is --name
		// (trial 46v's D2: infrabox); in Helm 3 and 4 it is the namespace
		rel, chart, ns, helm2 = f.get("n"), pos[0], f.get("namespace"), true
		if !t.helm2 {
			t.notCarried(x.stmt, "-n "+rel, "Helm 2's -n is the release's name (--name), which Helm 3 and 4 read as the namespace, so the script's command fails as written (no release name); the step installs the release "+rel+": write helm install "+rel+" CHART in the script")
		}
	default:
		// no release and no --generate-name: helm refuses it, which is no
		// "release without a name" (trial 46s70i's N4)
		given := "neither a release nor a chart"
		if len(pos) == 1 {
			given = "one argument (" + pos[0] + "), no release and chart"
		}
		t.account(x.stmt, importer.FateNotCarried, "", "helm "+sub+" is given "+given+", and no --generate-name, so helm refuses it: write the release and the chart in the command")
		return
	}
	h := &importer.OutHelm{Release: rel, Namespace: ns, Version: f.get("version")}
	if (t.helm2 || helm2) && h.Namespace != "" && !h.CreateNamespace {
		// Helm 2 creates the release's namespace: the script ran helm
		// init, or its command is Helm 2's form (trial 46s69d's D2: the
		// step failed on a fresh cluster, the namespace missing)
		h.CreateNamespace = true
		why := "the script runs helm init"
		if !t.helm2 {
			why = "whose form the command is"
		}
		t.info(x.stmt, "--namespace "+h.Namespace, "Helm 2 ("+why+") creates the namespace: written createNamespace: true")
	}
	if sub == "template" && t.pipeNS != "" {
		t.templateNS(x, h)
	}
	if h.Namespace == "" {
		h.Namespace = t.ctxNS // helm, too, takes the current context's namespace
	}
	if t.nameInUse(x, f, sub, h) || !t.chartRef(x, f, h, chart) {
		// no step installs it: what --name said the step does is moot
		t.m.NotCarried = slices.DeleteFunc(t.m.NotCarried, func(n importer.Note) bool {
			return n.Loc == t.loc(x.stmt) && strings.Contains(n.Why, "the step installs the release "+rel+":")
		})
		return
	}
	st := &importer.OutStep{Helm: h}
	if !t.helmFlags(x, f, st) {
		return
	}
	if f.is("dry-run") {
		t.account(x.stmt, importer.FateReadOnly, "", "--dry-run changes nothing in the cluster")
		return
	}
	switch {
	case sub == "upgrade" && !f.is("install", "i") && t.checks == 0: // under if helm status: the other branch installs
		t.info(x.stmt, "helm upgrade without --install", "khook's helm step also installs the release when it is absent")
	case sub == "template":
		t.info(x.stmt, "helm template | kubectl apply", "carried as a helm step: khook installs the chart as release "+rel+" (the script applied its manifests without a release)")
	}
	made := t.addStep(x.stmt, rel, "helm/"+h.Namespace+"/"+rel, st)
	if made != nil && h.Namespace == "" {
		t.contextNamespace(x, "helm", t.m.Steps[len(t.m.Steps)-1:])
	}
	t.installed(made, sub, f)
}

// templateNS is the namespace of helm template | kubectl apply -n NS:
// kubectl puts the objects that name none in NS, so the helm step works
// there; helm's own -n renders .Release.Namespace into the objects, and
// kubectl refuses an object naming another than its -n (trial 46s68g's D2).
func (t *translator) templateNS(x *cmd, h *importer.OutHelm) {
	switch {
	case h.Namespace == "":
		h.Namespace = t.pipeNS
	case h.Namespace != t.pipeNS:
		t.info(x.stmt, "helm template -n "+h.Namespace+" | kubectl apply -n "+t.pipeNS, "helm renders .Release.Namespace as "+h.Namespace+" into the objects that name it, and kubectl apply -n "+t.pipeNS+" refuses an object naming another namespace, so the script fails there; the step installs the release in "+h.Namespace+": make the two -n agree")
	}
}

// emptyByDefault drops from helm's arguments an unquoted variable of the
// environment that is empty unless set (${EXTRA_ARGS:-}): the step is
// what the script does by default, and the variable's words, which bash
// makes flags when it is set, are said at the line.
func (t *translator) emptyByDefault(x *cmd, pos []string) []string {
	var out []string
	for i, p := range pos {
		v := t.m.Var(strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}"))
		if i >= 2 && v != nil && !v.Secret && v.Required && v.Default == nil && !t.nounset && !v.Computed && v.Description == "read from the environment by the script" {
			// $HELM_OPTIONS never set, without set -u: empty, as
			// ${HELM_OPTIONS:-} is (trial 46s68r's D1: not carried)
			empty := ""
			v.Required, v.Default = false, &empty
			v.Description += "; unset, it is empty, as in the script"
		}
		if i < 2 || t.emptyUnlessSet(p) == nil {
			out = append(out, p)
			continue
		}
		t.info(x.stmt, p, "empty unless set, so the step adds nothing for it; when it is set, bash splits it into more flags of this command, which the step does not take: write them in the step")
	}
	return out
}

// emptyUnlessSet is the variable p is, "${NAME}" alone, when it is no
// secret and the run may set it but is empty by default.
func (t *translator) emptyUnlessSet(p string) *importer.Var {
	v := t.m.Var(strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}"))
	if !strings.HasPrefix(p, "${") || v == nil || v.Secret || v.Default == nil || *v.Default != "" || "${"+v.Name+"}" != p {
		return nil
	}
	return v
}

// markURL marks the variable a repository's URL is as a URL (format: url),
// so the inputs' schema says what validate checks.
func (t *translator) markURL(ref string) {
	if v := t.m.Var(strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}")); v != nil && isRef(ref) && !v.Secret {
		v.Format = "url"
		if v.Example == "" {
			v.Example = "https://charts.example.com" // what the written spec is validated with
		}
	}
}

// chartRef fills the chart and its source: a repository the script
// added, --repo, OCI, or a local path.
func (t *translator) chartRef(x *cmd, f flags, h *importer.OutHelm, chart string) bool {
	defer t.chartAuth(x, f, h, chart)
	if v := t.m.Var(strings.TrimSuffix(strings.TrimPrefix(chart, "${"), "}")); v != nil && isRef(chart) && v.Default != nil && *v.Default != "" && !strings.Contains(*v.Default, "${") && exists(t.abs(*v.Default)) {
		// CHART_PATH="${CHART_PATH:-./helm/librechat}": the chart on disk its
		// default names, a path of the spec (trial 46zs's D2: "not there")
		t.info(x.stmt, "chart "+chart, "its default "+*v.Default+" ("+v.From.String()+") is a local chart: the step installs that chart, at its path from the spec; a variable cannot name a chart folder")
		return t.chartRef(x, f, h, *v.Default)
	}
	switch {
	case strings.HasPrefix(chart, "oci://"):
		h.Chart = chart
	case f.get("repo") != "":
		h.Chart, h.Repo = chart, f.get("repo")
		t.markURL(h.Repo)
	case t.packages[t.abs(chart)].chart != "" && !exists(t.abs(chart)):
		// helm pull oci://…/app --version 1.2.3, then helm install app-1.2.3.tgz
		p := t.packages[t.abs(chart)]
		t.info(x.stmt, "chart "+chart, "the package helm pull fetched at "+p.at.String()+": the step installs that chart ("+p.chart+" "+p.version+") itself")
		h.Version = p.version
		return t.chartRef(x, f, h, p.chart)
	case strings.HasPrefix(chart, "${") && !exists(t.abs(chart)) && (strings.HasSuffix(chart, "/") || strings.Count(chart, "/") > 1):
		// "$LNMS_DIR/chart/LibreNMS-Helm/": a folder under a value only the
		// run knows, which no chart: can name (trial 46s69t's D2: refused
		// as "x/chart/LibreNMS-Helm/ looks like a repo-alias/chart name")
		dir, _, _ := strings.Cut(chart, "}")
		t.account(x.stmt, importer.FateNotCarried, "", "chart "+chart+" is a local chart folder under "+dir+"}, which only the run knows, and a step's chart: cannot be a variable: put the chart in the checkout and write its path in the script (./…) to import it")
		return false
	case strings.HasPrefix(chart, "/") || strings.HasPrefix(chart, ".") || exists(t.abs(chart)) || !strings.Contains(chart, "/") || strings.HasSuffix(chart, "/"):
		// oai-gnb/: a folder, as helm reads a name with no chart after the / (trial 46zd's D2)
		h.Chart = t.specPath(chart)
		if !exists(t.abs(chart)) {
			t.info(x.stmt, "chart "+t.specPath(chart), "a local chart that is not there at import ("+t.display(t.abs(chart))+"); build it before khook runs")
		}
		if t.depUpdate[t.abs(chart)] {
			h.DependencyUpdate = true
		}
		if h.Version != "" {
			t.info(x.stmt, "--version "+h.Version+" of the local chart "+h.Chart, importer.LocalChartVersion(t.abs(chart), h.Version))
			h.Version = ""
		}
	case strings.Count(chart, "/") == 1:
		repo, name, _ := strings.Cut(chart, "/")
		url, ok := t.repos[repo]
		if fi, err := os.Stat(t.abs(repo)); !ok && err == nil && fi.IsDir() && t.madeBy(t.abs(chart)) == "" && holdsCharts(t.abs(repo)) {
			// charts/nginx-ingress beside the local charts/ of the others
			// (46zza's D7): helm finds no such folder, then no repository
			// charts, and fails; no repository is to be made up for it
			t.account(x.stmt, importer.FateNotCarried, "", "chart "+chart+": no such chart folder under "+t.display(t.abs(repo))+" at import, and the script adds no repository "+repo+", so helm fails here as the script is; commit the chart, or fix the path, and import again")
			return false
		}
		if !ok {
			v := importer.RepoVar(repo, t.loc(x.stmt), "the script does not add it")
			url = t.ref(v)
			t.info(x.stmt, "chart "+chart, "the script does not `helm repo add "+repo+"` (bash's helm fails here unless the machine already knows it); its URL is the required variable "+v.Name)
			t.repoMissing = append(t.repoMissing, chart+" at "+t.loc(x.stmt).String())
		}
		h.Chart, h.Repo = name, url
		t.markURL(url)
	case strings.HasPrefix(chart, "https://") || strings.HasPrefix(chart, "http://"):
		t.account(x.stmt, importer.FateNotCarried, "", "chart "+chart+" is a packaged chart's URL, which khook does not download: put the .tgz in the repository (chart: ./path.tgz, reviewed and pinned) or use the chart's repository or OCI reference")
		return false
	default:
		t.account(x.stmt, importer.FateNotCarried, "", "chart "+chart+" is neither a repository chart, an OCI reference nor a local path at import")
		return false
	}
	if h.Chart == "." {
		h.Chart = "./"
	}
	was := h.Repo
	if note := importer.GitRepo(h); note != "" {
		t.info(x.stmt, "chart repository "+was, note)
	}
	return true
}

// chartAuth gives a remote chart its credentials: the command's own
// (--username/--password), else those of the repository it names or the
// registry the script logged in to.
func (t *translator) chartAuth(x *cmd, f flags, h *importer.OutHelm, chart string) {
	if h.Chart == "" || strings.HasPrefix(h.Chart, ".") || strings.HasPrefix(h.Chart, "/") {
		return
	}
	if f.get("username") != "" || f.get("password") != "" {
		if au, why := t.login(x, f, "the repository of chart "+chart, "HELM_REPO_"+varName(h.Release)); au != nil {
			h.Auth = au
		} else {
			t.info(x.stmt, "--username/--password", why+": add auth: with secret variables to the step")
		}
		return
	}
	var au *importer.OutAuth
	if strings.HasPrefix(h.Chart, "oci://") {
		au = t.registries[registryHost(h.Chart)]
	} else if repo, _, ok := strings.Cut(chart, "/"); ok && strings.Count(chart, "/") == 1 {
		au = t.repoAuth[repo]
	}
	if au != nil {
		c := *au
		h.Auth = &c
	}
}

// pulledPackage is a chart helm pull fetched as a package.
type pulledPackage struct {
	chart, version string
	at             importer.Loc
}

// pullPackage remembers the .tgz `helm pull CHART --version V [-d DIR]`
// writes: DIR/NAME-V.tgz, NAME the chart's last path element (Helm's
// file name). Without a version the file's name is only known when the
// script runs.
func (t *translator) pullPackage(x *cmd, f flags) {
	v := f.get("version")
	if len(f.pos) != 2 || v == "" || strings.Contains(v, "${") || strings.ContainsAny(v, "<>=^~* ") {
		return
	}
	chart := f.pos[1]
	name := chart[strings.LastIndex(chart, "/")+1:]
	dir := f.get("d", "destination")
	if dir == "" {
		dir = "."
	}
	if t.packages == nil {
		t.packages = map[string]pulledPackage{}
	}
	t.packages[t.abs(filepath.Join(dir, name+"-"+v+".tgz"))] = pulledPackage{chart: chart, version: v, at: t.loc(x.stmt)}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// helmFlags carries the flags that decide the release; false when the
// command cannot be carried at all.
func (t *translator) helmFlags(x *cmd, f flags, st *importer.OutStep) bool {
	h := st.Helm
	// Helm merges the values files in order, then --set-json, --set,
	// --set-string, --set-file and --set-literal, each kind over the one
	// before, whatever their order on the line.
	inline, drop := "", false
	for _, fl := range f.list {
		if fl.name == "f" || fl.name == "values" {
			inline, drop = t.helmValuesFile(x, h, fl.val, inline)
			if drop {
				// the command is named not carried: no step of the
				// chart's defaults (trial 46s69b's D5: a release written
				// with none of its values, counted carried)
				return false
			}
		}
	}
	for _, kind := range []string{"set-json", "set", "set-string", "set-literal"} {
		for _, fl := range f.list {
			if fl.name == kind {
				if err := t.helmSet(x, h, fl); err != nil {
					t.notCarried(x.stmt, "--"+fl.name+" "+fl.val, "helm cannot parse it: "+err.Error())
				}
			}
		}
	}
	t.setOverFiles(x, f, h)
	for _, fl := range f.list {
		switch fl.name {
		case "n", "namespace", "version", "repo", "name", "install", "i", "dry-run", "debug", "render-subchart-notes",
			"hide-notes", "o", "output", "include-crds", "create-namespace", "wait", "wait-for-jobs", "atomic",
			"rollback-on-failure", "dependency-update", "skip-crds", "take-ownership", "timeout",
			"username", "password", "password-stdin", "keyring", // chartAuth; verify below
			"output-dir", // helm template --output-dir: where the apply reads the manifests (renderedApply)
			// helm template --skip-tests leaves the test hooks out of the
			// manifests; an install never runs them (only helm test does),
			// so the helm step already leaves them out (trial 46s68g's D5)
			"skip-tests":
		case "verify":
			keyring, at := f.get("keyring"), ""
			if keyring != "" {
				keyring, at = t.specPath(keyring), t.abs(keyring)
			}
			if v, why := importer.Verify(h, keyring, at); v != nil {
				h.Verify = v
			} else {
				t.notCarried(x.stmt, "--verify", why)
			}
		case "f", "values", "set", "set-string", "set-json", "set-literal": // above
		case "set-file":
			t.notCarried(x.stmt, "--set-file "+fl.val, "khook never copies a file's content into the spec; move the value into a values file (valuesFrom file:)")
		case "kube-context", "kubeconfig":
			t.info(x.stmt, "--"+fl.name, "khook runs against the cluster it is given (--kubeconfig, --context)")
		case "force", "reset-values", "reuse-values", "reset-then-reuse-values", "cleanup-on-fail", "history-max", "max-history", "description", "devel", "disable-openapi-validation":
			t.info(x.stmt, "--"+fl.name, "khook's helm step has no such option; the release is installed without it")
		case "server-side", "force-conflicts":
			t.info(x.stmt, "--"+fl.name, "khook's helm steps apply server-side and take the fields they render from other managers, as --server-side --force-conflicts do")
		case "no-hooks":
			t.notCarried(x.stmt, "--no-hooks", "khook runs the chart's hooks (its Jobs, its migrations); the script installs without them: drop the flag, or turn the hooks off with the chart's values")
		case "enable-dns":
			t.notCarried(x.stmt, "--enable-dns", importer.WhyDNS)
		case "insecure-skip-tls-verify", "ca-file", "cert-file", "key-file":
			t.notCarried(x.stmt, "--"+fl.name, importer.WhyTLS)
		case "plain-http":
			t.notCarried(x.stmt, "--plain-http", importer.WhyPlainHTTP)
		default:
			if v := gluedFlag(fl.name, helmValued); v != "" {
				// --version"$V" is one word, --version45.21.0: helm stops
				// at the unknown flag, and so does the script under set -e
				// (trial 46s69l's D7: named a missing feature)
				t.notCarried(x.stmt, "helm flag --"+fl.name, "helm rejects it as an unknown flag (a space is missing after --"+v+"), so the script fails here; write --"+v+" and its value apart in the script and import again")
				continue
			}
			t.notCarried(x.stmt, "helm flag --"+fl.name, "khook's helm step has no equivalent; set it by hand")
		}
	}
	h.CreateNamespace = h.CreateNamespace || f.is("create-namespace")
	h.Wait = f.is("wait", "wait-for-jobs") || f.is("atomic", "rollback-on-failure")
	h.Atomic = f.is("atomic", "rollback-on-failure")
	h.DependencyUpdate = h.DependencyUpdate || f.is("dependency-update")
	h.TakeOwnership = f.is("take-ownership")
	h.SkipSchemaValidation = f.is("skip-schema-validation")
	if f.is("skip-crds") {
		h.CRDs = "skip"
	}
	if to := f.get("timeout"); to != "" {
		st.Timeout = t.duration(x, to)
	}
	return true
}

// duration is a --timeout as the spec writes it (Helm 2's bare seconds too).
func (t *translator) duration(x *cmd, s string) string {
	if _, err := strconv.Atoi(s); err == nil && s != "0" {
		// Helm 2's form; Helm 3 and 4 (and kubectl) parse a duration
		t.notCarried(x.stmt, "--timeout "+s, x.args[0]+" refuses it (time: missing unit in duration), so the script's command fails as written; the step takes "+s+"s, as Helm 2 read it: write --timeout "+s+"s in the script")
		return s + "s"
	}
	if varRef.MatchString(s) {
		// readonly WAITTIME=${WAITTIME:-5m}; --timeout "${WAITTIME}", also
		// --timeout="${ISO_WAIT}s" of ISO_WAIT=${ISO_WAIT:-3600} (46zza's D3)
		var names []string
		d := varRef.ReplaceAllStringFunc(s, func(ref string) string {
			v := t.m.Var(ref[2 : len(ref)-1])
			if v == nil || v.Default == nil {
				return ref
			}
			names = append(names, v.Name+", "+*v.Default)
			return *v.Default
		})
		if _, err := time.ParseDuration(d); err == nil && !varRef.MatchString(d) {
			as := ""
			if len(names) > 1 || !strings.HasSuffix(names[0], ", "+d) {
				as = ", as " + d
			}
			t.info(x.stmt, "--timeout "+s, "written as the default of "+strings.Join(names, " and ")+as+": a step's timeout is not read from a variable; edit the step to change it")
			return d
		}
	}
	if _, err := time.ParseDuration(s); err != nil {
		t.notCarried(x.stmt, "--timeout "+s, "not a duration; the step keeps khook's default timeout")
		return ""
	}
	return s
}

// helmValuesFile carries one -f: its files (a comma-separated list) into
// valuesFrom, a here-document's values into values. inline names the
// inline values before it; one returned when this -f has some. khook's
// values override all of valuesFrom, so a file after inline values, which
// Helm lets override them, is said.
// drop: the command is not carried, said: a values file the run makes
// with text khook cannot know.
func (t *translator) helmValuesFile(x *cmd, h *importer.OutHelm, val, inline string) (string, bool) {
	for _, p := range strings.Split(val, ",") {
		if inline != "" && p != "-" && t.wrote[t.writeKey(p)] == nil {
			t.info(x.stmt, "values file "+p, "it comes after "+inline+", whose values khook writes as values:, which override every valuesFrom: where both set a key, Helm takes this file's and khook the other's; move the key to one place")
		}
		switch {
		case p == "-":
			if x.stdin == nil || !x.stdin.known {
				what, why := "-f -", "the values it reads on its standard input are not known at import"
				if t.procSubst != "" {
					// -f <(cat <<EOF … EOF): the script has no -f -, and the
					// whole document is left out (trial 46s69c's D1)
					what, why = t.procSubst, "the values document it reads is not known at import, so the step installs the chart with its own default values, none of the document's"
				}
				if t.partialValues(x, h, what) {
					inline = what
					continue
				}
				if x.stdin != nil && x.stdin.why != "" {
					why += " (" + x.stdin.why + ")"
				}
				t.notCarried(x.stmt, what, why)
				continue
			}
			m, err := t.helmValues(x, "-f -", x.stdin.text)
			if err != nil {
				t.notCarried(x.stmt, "-f -", "the values on its standard input are not YAML: "+err.Error())
				continue
			}
			t.secretValues(x, m, "")
			t.quotedDefaults(x, m, "")
			h.Values = mergeMaps(h.Values, m)
			inline = "-f -"
		case strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://"):
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{URL: p})
		case t.downloaded(p) != "":
			u := t.wrote[t.writeKey(p)].url
			t.info(x.stmt, "values file "+p, "the script downloads it from "+u+": the step reads the URL, as it is when the step runs")
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{URL: u})
		case t.copied(p) != "":
			orig := t.wrote[t.writeKey(p)].fromAbs
			t.info(x.stmt, "values file "+p, "a copy the script makes of "+t.display(orig)+": the step reads that file")
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: t.specPath(orig)})
		case t.wrote[t.writeKey(p)] != nil && t.wrote[t.writeKey(p)].known && t.wrote[t.writeKey(p)].defaults != "":
			w := t.wrote[t.writeKey(p)]
			w.read = true
			t.info(x.stmt, "values file "+p, "the default values of chart "+w.defaults+", which helm show values writes to it at "+w.at.String()+": the step installs with the chart's defaults, not the file the repository holds")
		case t.wrote[t.writeKey(p)] != nil && t.wrote[t.writeKey(p)].url == "":
			text, _, ok := t.readWritten(x, p)
			if !ok {
				return inline, true
			}
			m, err := t.helmValues(x, "-f "+p, text)
			if err != nil {
				t.notCarried(x.stmt, "-f "+p, "the values the script writes to it are not YAML: "+err.Error())
				continue
			}
			t.secretValues(x, m, "")
			h.Values = mergeMaps(h.Values, m)
			inline = "-f " + p
		case t.computedIn(p) != "":
			name := t.computedIn(p)
			t.account(x.stmt, importer.FateNotCarried, "", "its values file "+p+" is under $"+name+", which the script computes when it runs ("+t.vars[name].decl.From.String()+"): the file is made then, not in the repository khook reads, and without it the release would get the chart's defaults; write the values into the step (values:, each credential a secret variable)")
			return inline, true
		default:
			switch abs := t.abs(p); {
			case strings.Contains(p, "${") && t.madeBy(abs) != "":
				// echo "…" > $DIR/values.yaml: the script makes it (trial
				// 46s69t's D1: its values lost, "import faithful")
				t.info(x.stmt, "values file "+p, "made by "+t.madeBy(abs)+", which khook does not run; the step reads the file at "+p+" when it runs, whatever is there then: write its values into the step")
			case exists(abs) || strings.Contains(p, "${") || t.cwdUnknown != "" && !filepath.IsAbs(p):
				// (after a cd known only when the script runs, khook cannot look)
			case t.madeBy(abs) != "":
				// ./gen.sh > v.yaml, gen.py --out v.yaml: the script makes it
				t.info(x.stmt, "values file "+p, "not there at import ("+t.display(abs)+"): made by "+t.madeBy(abs)+", which khook does not run; the step reads it when it runs")
			case filepath.IsAbs(p) && outside(t.runDir, abs) && outside(workDir(), abs):
				// -f /home/ubuntu/galaxy-values.yaml: as for a manifest there
				// (trial 46s68h's D2)
				t.notCarried(x.stmt, "values file "+p, abs+", a file of the machine the script runs on, not of the checkout, does not exist when the import runs; helm would fail here without it: commit the file and point the step at it, or import where the file is")
			default:
				// helm refuses the run at this line without it, so the import is
				// not faithful: said as not carried, the step still names it
				// (trials 46s67's values files carried silently, "import faithful")
				// "${basedir}"/../v.yaml, $(dirname "$0") made absolute: named
				// from --dir, never by this machine's path (trial 46s69o's D2)
				t.notCarried(x.stmt, "values file "+t.display(abs), "the file "+t.display(abs)+" does not exist under the import's dir; helm would fail here; add it, or import with the --dir the script runs from")
			}
			h.ValuesFrom = append(h.ValuesFrom, importer.OutSource{File: t.specPath(p)})
		}
	}
	return inline, false
}

// helmValues reads values as Helm does (sigs.k8s.io/yaml, go-yaml v2 not
// strict): a key written twice in a mapping is no error, the last one
// wins (46zza's D6: a values file with loadBalancerIP twice, refused as
// "not YAML", its release written without values); said at the line.
func (t *translator) helmValues(x *cmd, what, text string) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	var dups []string
	var dedup func(n *yaml.Node)
	dedup = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			last := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				last[n.Content[i].Value] = i
			}
			var kept []*yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; last[k.Value] != i {
					dups = append(dups, fmt.Sprintf("%s (line %d, again at line %d)", k.Value, k.Line, n.Content[last[k.Value]].Line))
					continue
				}
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
			n.Content = kept
		}
		for _, c := range n.Content {
			dedup(c)
		}
	}
	dedup(&doc)
	var m map[string]any
	if err := doc.Decode(&m); err != nil && doc.Kind != 0 {
		return nil, err
	}
	if len(dups) > 0 {
		t.info(x.stmt, what, "keys written twice in a mapping: "+strings.Join(dups, ", ")+"; Helm takes the last of each, and so does the step")
	}
	return m, nil
}

// setOverFiles keeps what the values files give a list that --set indexes:
// helm sets a[0].b inside the files' element (its other keys, the other
// elements stay), where khook's values: would replace the list whole
// (trial 46s's D3, in a helmfile). Each indexed list becomes the files'
// list with the sets over it; files the import cannot read stay as they are.
func (t *translator) setOverFiles(x *cmd, f flags, h *importer.OutHelm) {
	var lists [][]string
	for _, fl := range f.list {
		if fl.name != "set" && fl.name != "set-string" && fl.name != "set-literal" && fl.name != "set-json" {
			continue
		}
		for _, part := range strings.Split(fl.val, ",") {
			key, _, ok := strings.Cut(part, "=")
			if at := strings.Index(key, "["); ok && at > 0 {
				lists = append(lists, strings.Split(key[:at], "."))
			}
		}
	}
	if len(lists) == 0 {
		return
	}
	var files map[string]any
	for _, fl := range f.list {
		if fl.name != "f" && fl.name != "values" || t.wrote[t.writeKey(fl.val)] != nil && t.copied(fl.val) == "" {
			continue
		}
		p := t.abs(fl.val)
		if t.copied(fl.val) != "" {
			p = t.wrote[t.writeKey(fl.val)].fromAbs
		}
		var m map[string]any
		if data, err := readFile(p); err == nil && yaml.Unmarshal(data, &m) == nil {
			files = mergeMaps(files, m)
		} else {
			// a URL, a file not there at import: what it gives the
			// indexed list is not known, so the spec's list may differ
			t.info(x.stmt, "-f "+fl.val, "the import cannot read it, so a list --set indexes keeps only what the --set gives; if "+fl.val+" gives that list, write the whole list in values:")
		}
	}
	for _, path := range lists {
		set, _ := lookup(h.Values, path).([]any)
		from, _ := lookup(files, path).([]any)
		if set == nil || from == nil {
			continue
		}
		out := slices.Clone(from)
		for i, x := range set {
			switch {
			case i >= len(out):
				out = append(out, x)
			case x == nil:
			default:
				fm, ok1 := out[i].(map[string]any)
				sm, ok2 := x.(map[string]any)
				if ok1 && ok2 {
					x = mergeMaps(deepCopyMap(fm), sm)
				}
				out[i] = x
			}
		}
		setAt(h.Values, path, out)
	}
}

func lookup(m map[string]any, path []string) any {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func setAt(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		m = m[k].(map[string]any) // lookup found the list under it
	}
	m[path[len(path)-1]] = v
}

func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sm, ok := v.(map[string]any); ok {
			v = deepCopyMap(sm)
		}
		out[k] = v
	}
	return out
}

// helmSet parses --set and its kin with Helm's own parser (Helm's typing:
// lists {a,b}, indexes a[0].b, --set-string stays a string). A literal
// under a secret-looking key becomes a secret variable.
func (t *translator) helmSet(x *cmd, h *importer.OutHelm, fl flag) error {
	if h.Values == nil {
		h.Values = map[string]any{}
	}
	// A ${NAME} reference is one value to Helm's parser, whose syntax its
	// braces would break ("{${NS}}" is a one-item list): a mark stands for it.
	if fl.name == "set" {
		if fl.val = t.setsFromSecrets(x, h, fl.val); fl.val == "" {
			return nil
		}
	}
	val, refs := protectRefs(t.secretSets(x, fl.val))
	defer restoreRefs(h.Values, refs)
	switch fl.name {
	case "set":
		return strvals.ParseInto(val, h.Values)
	case "set-string":
		m := map[string]any{}
		if err := strvals.ParseIntoString(val, m); err != nil {
			return err
		}
		restoreRefs(m, refs)
		quoteRefs(m)
		h.Values = mergeSet(h.Values, m)
		return nil
	case "set-literal":
		return strvals.ParseLiteralInto(val, h.Values)
	}
	return strvals.ParseJSON(val, h.Values)
}

// protectRefs replaces each ${NAME} of s by a mark no --set syntax uses.
func protectRefs(s string) (string, []string) {
	var refs []string
	out := varRef.ReplaceAllStringFunc(s, func(r string) string {
		refs = append(refs, r)
		return "\x01" + strconv.Itoa(len(refs)-1) + "\x01"
	})
	return out, refs
}

// restoreRefs puts the references back into the values parsed, keys too.
func restoreRefs(v any, refs []string) any {
	if len(refs) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		for i, r := range refs {
			x = strings.ReplaceAll(x, "\x01"+strconv.Itoa(i)+"\x01", r)
		}
		return x
	case []any:
		for i := range x {
			x[i] = restoreRefs(x[i], refs)
		}
	case map[string]any:
		for k, e := range x {
			nk := restoreRefs(k, refs).(string)
			if nk != k {
				delete(x, k)
			}
			x[nk] = restoreRefs(e, refs)
		}
	}
	return v
}

// secretSets replaces literal values under secret-looking keys with secret
// variables: `--set auth.password=hunter2` never writes hunter2.
func (t *translator) secretSets(x *cmd, s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if m := wholeVarRef.FindStringSubmatch(v); ok && m != nil && importer.SecretKey(k) {
			t.secretInput(x, k, m[1])
		}
		if !ok || v == "" || !importer.SecretKey(k) || (strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}")) || importer.NoCredential(k, v, setSiblings(parts, k)) {
			continue
		}
		name := varName(k)
		t.secretVar(v, name)
		t.ref(&importer.Var{Name: name, Secret: true, Required: true, From: t.loc(x.stmt), Description: "the value the script sets for " + k})
		t.info(x.stmt, "--set "+k, "its literal value is not copied into the spec: it is the secret variable "+name+" (KHOOK_SECRET_"+name+")")
		parts[i] = k + "=${" + name + "}"
	}
	return strings.Join(parts, ",")
}

// wholeVarRef is a value that is one variable: ${NAME}.
var wholeVarRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// secretInput makes the variable a credential key is set from a secret
// one, whatever its name: --set license_key=$GLOO_LICENSE_WITH_AI (trial
// 46s69o's N1: a licence key written as a plain variable).
func (t *translator) secretInput(x *cmd, k, name string) {
	v := t.m.Var(name)
	if v == nil || v.Secret {
		return
	}
	v.Secret = true
	if v.Default != nil {
		if *v.Default != "" {
			t.m.Info = append(t.m.Info, importer.Note{Loc: v.From, What: "the default of " + name, Why: "not copied into the spec: a secret variable has no default; give it as KHOOK_SECRET_" + name})
		}
		v.Default, v.Required = nil, true
	}
	t.info(x.stmt, "--set "+k, name+" is a secret variable, as "+k+" is a credential: give it as KHOOK_SECRET_"+name)
}

// workDir is where the import runs: the checkout, which a path the script
// makes absolute ($(dirname "$0")/..) may be in above --dir.
func workDir() string {
	wd, _ := os.Getwd()
	return wd
}

// secretValues replaces the literal values under credential keys of
// values the script writes inline (cat <<EOF > values.yaml, -f - of a
// here-document) with secret variables, as secretSets does for --set:
// harborAdminPassword: s3cret never reaches the spec (trial 46zj's D1).
func (t *translator) secretValues(x *cmd, m map[string]any, prefix string) {
	keys := slices.Sorted(maps.Keys(m)) // in order: the variables and notes are the same each run
	if n, ok := m["name"].(string); ok && secretLooking(n) {
		// env: [{name: DB_PASSWORD, value: s3cret}]
		if val, ok := m["value"].(string); ok && val != "" && !strings.Contains(val, "${") {
			t.secretVar(val, varName(n))
			t.ref(&importer.Var{Name: varName(n), Secret: true, Required: true, From: t.loc(x.stmt), Description: "the value the script writes for " + n})
			t.info(x.stmt, "values "+prefix+"value", "its literal value is not copied into the spec: it is the secret variable "+varName(n)+" (KHOOK_SECRET_"+varName(n)+")")
			m["value"] = "${" + varName(n) + " | toJson}"
		}
	}
	for _, k := range keys {
		path := prefix + k
		switch val := m[k].(type) {
		case map[string]any:
			t.secretValues(x, val, path+".")
		case []any:
			for i, e := range val {
				if em, ok := e.(map[string]any); ok {
					t.secretValues(x, em, path+"["+strconv.Itoa(i)+"].")
				}
			}
		case string:
			config := strings.Contains(val, "\n") && !strings.Contains(val, "${") && configCredential(val)
			if !config && (val == "" || !importer.SecretKey(k) || strings.Contains(val, "${") || importer.NoCredential(path, val, namedKeys(m, keys))) {
				continue
			}
			name := varName(path)
			t.secretVar(val, name)
			t.ref(&importer.Var{Name: name, Secret: true, Required: true, From: t.loc(x.stmt), Description: "the value the script writes for " + path})
			t.info(x.stmt, "values "+path, "its literal value is not copied into the spec: it is the secret variable "+name+" (KHOOK_SECRET_"+name+")")
			m[k] = "${" + name + " | toJson}"
		}
	}
}

// setSiblings are the keys beside k among the parts of one --set
// (x.secretName beside x.secretKey).
func setSiblings(parts []string, k string) []string {
	dir := k[:strings.LastIndex(k, ".")+1]
	var out []string
	for _, p := range parts {
		if o, _, _ := strings.Cut(p, "="); o != k && strings.HasPrefix(o, dir) && !strings.Contains(o[len(dir):], ".") {
			out = append(out, o[len(dir):])
		}
	}
	return out
}

// varName is a khook variable name made of a key ("auth.password" → AUTH_PASSWORD).
func varName(k string) string {
	s := strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(k, "_"))
	s = strings.Trim(s, "_")
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "V_" + s
	}
	return s
}

// quoteRefs keeps a --set-string value that holds ${VAR} a string after
// khook substitutes it (a quoted YAML scalar).
func quoteRefs(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "${") {
				m[k] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Style: yaml.DoubleQuotedStyle}
			}
		case map[string]any:
			quoteRefs(x)
		}
	}
}

// mergeMaps merges src into dst as helm merges values (maps deeply).
func mergeMaps(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// mergeSet merges one --set-string's values into those before it as
// Helm's parser does on the one map: an index sets that element of the
// list and leaves the others, so extraEnv[0].name and extraEnv[0].value
// of two flags make one element (trial 46s69a's D1: the name dropped).
func mergeSet(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		dst[k] = mergeSetValue(dst[k], v)
	}
	return dst
}

func mergeSetValue(dst, src any) any {
	switch s := src.(type) {
	case map[string]any:
		if dm, ok := dst.(map[string]any); ok {
			return mergeSet(dm, s)
		}
	case []any:
		dl, ok := dst.([]any)
		if !ok {
			return src
		}
		for len(dl) < len(s) {
			dl = append(dl, nil)
		}
		for i, e := range s {
			if e != nil {
				dl[i] = mergeSetValue(dl[i], e)
			}
		}
		return dl
	}
	return src
}

// isRef: s is one ${NAME}, nothing around it.
func isRef(s string) bool {
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 && !strings.Contains(s, "|")
}

// namedKeys are the keys of m whose value is not empty: a sibling
// caSecretName: "" names no Secret, so secretKey: beside it is still a
// credential (trial 46s68p's D4: Harbor's secretKey copied in clear).
func namedKeys(m map[string]any, keys []string) []string {
	var out []string
	for _, k := range keys {
		if v := m[k]; v != nil && v != "" {
			out = append(out, k)
		}
	}
	return out
}

// holdsCharts: dir has a chart folder in it (DIR/x/Chart.yaml), so a
// DIR/name helm finds nowhere is a missing chart, not a repository the
// machine knows (trial 46s68q's D1: immich/immich beside a folder immich/
// holding a README, the repository added by another script).
func holdsCharts(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "Chart.yaml"))
	return len(m) > 0
}

// configLine is a line of a config text that sets a name to a literal:
// SECRET_KEY = 'x', password: x, TOKEN=x.
var configLine = regexp.MustCompile(`(?m)^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[:=]\s*['"]*([^'"\s#][^'"\s]*)`)

// configCredential: a multi-line value (a superset_config.py override, an
// .ini) sets a credential to a literal in it: the whole text is a secret
// variable, never copied (trial 46s68t's D3: SECRET_KEY under
// configOverrides.secret written twice in clear).
func configCredential(text string) bool {
	for _, m := range configLine.FindAllStringSubmatch(text, -1) {
		if (importer.SecretKey(m[1]) || secretLooking(m[1])) && !importer.NoCredential(m[1], m[2], nil) && !strings.HasPrefix(m[2], "$") {
			return true
		}
	}
	return false
}
