package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The platform benchmark's workload (issue #14): a generated bootstrap the
// size of a real platform team's, written as a khook spec and as the
// equivalent helm + kubectl script. Everything is derived from the indexes
// below, so the same prefix always gives the same bytes.
const (
	platformNamespaces  = 20
	platformCharts      = 30
	configStepsPerNS    = 6  // apply steps of plain configuration per namespace
	crsPerKind          = 5  // custom resources of each CRD kind per namespace
	platformWaits       = 26 // wait steps: the first charts' deployments Available
	chartConfigMaps     = 15
	chartSecrets        = 2
	jobName             = "bootstrap"
	jobImage            = "registry.example/tools:1.0"
	rolloutChart        = platformCharts - 1
	platformStepTimeout = "5m"
)

// crdKinds are the platform's CustomResourceDefinitions (kind, plural).
var crdKinds = [][2]string{{"Widget", "widgets"}, {"Gadget", "gadgets"}, {"Gizmo", "gizmos"}, {"Sprocket", "sprockets"}}

// Object is one object the workload creates (pods and other objects that
// controllers create are not counted).
type Object struct{ Kind, Namespace, Name string }

// Platform is a generated workload in Dir: khook.yaml, bootstrap.sh,
// charts/, values/ and manifests/.
type Platform struct {
	Prefix     string
	Dir        string
	Steps      int
	Charts     []string
	Namespaces []string
	Objects    []Object
}

// Spec and Script are the workload's two forms.
func (p *Platform) Spec() string   { return filepath.Join(p.Dir, "khook.yaml") }
func (p *Platform) Script() string { return filepath.Join(p.Dir, "bootstrap.sh") }

// KindNamespaces counts the distinct (kind, namespace) pairs of the objects,
// a cluster-scoped kind once: the unit of issue #14's request target.
func (p *Platform) KindNamespaces() int {
	seen := map[[2]string]bool{}
	for _, o := range p.Objects {
		seen[[2]string{o.Kind, o.Namespace}] = true
	}
	return len(seen)
}

// Group is the API group of the workload's CRDs; each prefix has its own so
// that two workloads share a cluster without sharing a cluster-scoped object.
func (p *Platform) Group() string { return p.Prefix + ".bench.khook.test" }

func (p *Platform) ns(i int) string { return fmt.Sprintf("%s-ns-%02d", p.Prefix, i%platformNamespaces) }

func chartName(i int) string { return fmt.Sprintf("app-%02d", i) }

// GeneratePlatform writes the workload for prefix (a DNS label of at most 20
// characters) into dir.
func GeneratePlatform(dir, prefix string) (*Platform, error) {
	p := &Platform{Prefix: prefix, Dir: dir}
	w := &writer{dir: dir}
	var spec, script strings.Builder
	step := func(format string, args ...any) {
		p.Steps++
		fmt.Fprintf(&spec, format, args...)
	}
	sh := func(format string, args ...any) { fmt.Fprintf(&script, format+"\n", args...) }
	spec.WriteString(specHeader)
	script.WriteString(scriptHeader)

	// Namespaces and CRDs first, as a platform's script does.
	var nsDocs []string
	for i := range platformNamespaces {
		p.Namespaces = append(p.Namespaces, p.ns(i))
		p.add("Namespace", "", p.ns(i))
		nsDocs = append(nsDocs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    platform.bench/tier: %s\n", p.ns(i), tier(i)))
	}
	w.file("manifests/namespaces.yaml", strings.Join(nsDocs, "---\n"))
	step("  - name: namespaces\n    apply:\n      manifests:\n        - file: ./manifests/namespaces.yaml\n")
	sh(`"$KUBECTL" apply -f "$dir/manifests/namespaces.yaml"`)

	var crdDocs []string
	for _, k := range crdKinds {
		p.add("CustomResourceDefinition", "", k[1]+"."+p.Group())
		crdDocs = append(crdDocs, fmt.Sprintf(crdTemplate, k[1], p.Group(), k[0], strings.ToLower(k[0])))
	}
	w.file("manifests/crds.yaml", strings.Join(crdDocs, "---\n"))
	step("  - name: crds\n    apply:\n      waitFor: condition=Established\n      manifests:\n        - file: ./manifests/crds.yaml\n")
	sh(`"$KUBECTL" apply -f "$dir/manifests/crds.yaml"`)
	sh(`"$KUBECTL" wait --for=condition=Established --timeout=2m -f "$dir/manifests/crds.yaml"`)

	// Thirty charts (the platform's operators and apps), each waited for.
	for i := range platformCharts {
		name, ns := chartName(i), p.ns(i)
		p.Charts = append(p.Charts, name)
		w.chart(name, i)
		w.file("values/"+name+".yaml", fmt.Sprintf("team: team-%02d\nreplicas: 1\nimage: example.invalid/%s:1.%d.0\n", i%7, name, i%4))
		p.add("Deployment", ns, name)
		p.add("Service", ns, name)
		p.add("ServiceAccount", ns, name)
		for k := range chartConfigMaps {
			p.add("ConfigMap", ns, fmt.Sprintf("%s-cfg-%d", name, k))
		}
		for k := range chartSecrets {
			p.add("Secret", ns, fmt.Sprintf("%s-secret-%d", name, k))
		}
		step("  - name: %s\n    needs: [namespaces, crds]\n    helm:\n      chart: ./charts/%s\n      namespace: %s\n      wait: true\n      valuesFrom:\n        - file: ./values/%s.yaml\n", name, name, ns, name)
		sh(`"$HELM" upgrade --install %s "$dir/charts/%s" --namespace %s --values "$dir/values/%s.yaml" --wait --timeout 2m`, name, name, ns, name)
	}

	// Plain configuration: six apply steps per namespace.
	for i := range platformNamespaces {
		ns := p.ns(i)
		for k := range configStepsPerNS {
			file := fmt.Sprintf("manifests/%s/config-%d.yaml", ns, k)
			w.file(file, p.configDocs(ns, k))
			step("  - name: config-%02d-%d\n    needs: [namespaces]\n    apply:\n      namespace: %s\n      manifests:\n        - file: ./%s\n", i, k, ns, file)
			sh(`"$KUBECTL" apply --namespace %s -f "$dir/%s"`, ns, file)
		}
	}

	// Custom resources, after their CRDs and the charts of their namespace.
	for i := range platformNamespaces {
		ns := p.ns(i)
		needs := []string{"crds"}
		for c := i; c < platformCharts; c += platformNamespaces {
			needs = append(needs, chartName(c))
		}
		file := fmt.Sprintf("manifests/%s/crs.yaml", ns)
		w.file(file, p.crDocs(ns))
		step("  - name: crs-%02d\n    needs: [%s]\n    apply:\n      namespace: %s\n      manifests:\n        - file: ./%s\n", i, strings.Join(needs, ", "), ns, file)
		sh(`"$KUBECTL" apply --namespace %s -f "$dir/%s"`, ns, file)
	}

	// Waits, a rollout and a job: the bootstrap's last checks.
	for i := range platformWaits {
		name, ns := chartName(i), p.ns(i)
		step("  - name: wait-%s\n    needs: [%s]\n    wait:\n      for: condition=Available\n      on: deployment/%s\n      namespace: %s\n", name, name, name, ns)
		sh(`"$KUBECTL" wait --namespace %s --for=condition=Available deployment/%s --timeout=2m`, ns, name)
	}
	rn, rns := chartName(rolloutChart), p.ns(rolloutChart)
	step("  - name: rollout-%s\n    needs: [%s]\n    rollout:\n      status: deployment/%s\n      namespace: %s\n", rn, rn, rn, rns)
	sh(`"$KUBECTL" rollout status --namespace %s deployment/%s --timeout=2m`, rns, rn)

	jns := p.ns(0)
	p.add("Job", jns, jobName)
	step("  - name: %s\n    needs: [crs-00, rollout-%s]\n    job:\n      image: %s\n      command: [sh, -c, echo bootstrapped]\n      namespace: %s\n", jobName, rn, jobImage, jns)
	w.file("manifests/job.yaml", fmt.Sprintf(jobTemplate, jobName, jobImage))
	sh("# A Job cannot be re-applied: delete the previous run's, then create it anew.")
	sh(`"$KUBECTL" delete job %s --namespace %s --ignore-not-found --wait=true`, jobName, jns)
	sh(`"$KUBECTL" create --namespace %s -f "$dir/manifests/job.yaml"`, jns)
	sh(`"$KUBECTL" wait --namespace %s --for=condition=complete job/%s --timeout=2m`, jns, jobName)

	w.file("khook.yaml", spec.String())
	w.file("bootstrap.sh", script.String())
	return p, w.err
}

func (p *Platform) add(kind, ns, name string) {
	p.Objects = append(p.Objects, Object{Kind: kind, Namespace: ns, Name: name})
}

func tier(i int) string { return [...]string{"core", "data", "edge", "apps"}[i%4] }

// configDocs is one config apply step's manifest: three ConfigMaps, two
// Secrets, a ServiceAccount, a Role and its RoleBinding.
func (p *Platform) configDocs(ns string, k int) string {
	var docs []string
	for c := range 3 {
		name := fmt.Sprintf("settings-%d-%d", k, c)
		p.add("ConfigMap", ns, name)
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  namespace: %s\n  feature-%d: \"on\"\n  limit: \"%d\"\n", name, ns, c, 100*(k+1)+c))
	}
	for s := range 2 {
		name := fmt.Sprintf("credentials-%d-%d", k, s)
		p.add("Secret", ns, name)
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\ntype: Opaque\nstringData:\n  username: svc-%d-%d\n  password: not-a-real-password-%d%d\n", name, k, s, k, s))
	}
	sa := fmt.Sprintf("worker-%d", k)
	p.add("ServiceAccount", ns, sa)
	p.add("Role", ns, sa)
	p.add("RoleBinding", ns, sa)
	docs = append(docs,
		fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n", sa),
		fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: %s\nrules:\n  - apiGroups: [\"\"]\n    resources: [configmaps]\n    verbs: [get, list, watch]\n", sa),
		fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: %s\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: %s\nsubjects:\n  - kind: ServiceAccount\n    name: %s\n    namespace: %s\n", sa, sa, sa, ns))
	return strings.Join(docs, "---\n")
}

// crDocs is one namespace's custom resources: crsPerKind of each CRD kind.
func (p *Platform) crDocs(ns string) string {
	var docs []string
	for _, k := range crdKinds {
		for c := range crsPerKind {
			name := fmt.Sprintf("%s-%d", strings.ToLower(k[0]), c)
			p.add(k[0], ns, name)
			docs = append(docs, fmt.Sprintf("apiVersion: %s/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  size: %d\n  owner: %s\n", p.Group(), k[0], name, c+1, ns))
		}
	}
	return strings.Join(docs, "---\n")
}

// writer writes files under dir and keeps the first error.
type writer struct {
	dir string
	err error
}

func (w *writer) file(rel, content string) {
	if w.err != nil {
		return
	}
	path := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.err = err
		return
	}
	mode := os.FileMode(0o644)
	if strings.HasSuffix(rel, ".sh") {
		mode = 0o755
	}
	w.err = os.WriteFile(path, []byte(content), mode)
}

// chart writes a local chart directory (the same templates, its own name).
func (w *writer) chart(name string, i int) {
	w.file("charts/"+name+"/Chart.yaml", fmt.Sprintf("apiVersion: v2\nname: %s\ndescription: Platform benchmark chart %d.\ntype: application\nversion: 0.%d.0\nappVersion: \"1.%d.0\"\n", name, i, 1+i%3, i%4))
	w.file("charts/"+name+"/values.yaml", fmt.Sprintf("team: unset\nreplicas: 1\nimage: example.invalid/app:1.0.0\nconfigMaps: %d\nsecrets: %d\n", chartConfigMaps, chartSecrets))
	w.file("charts/"+name+"/templates/app.yaml", chartTemplate)
}
