package bench

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchPolicies are ten admission policies (#49's acceptance) that admit
// the platform workload: over its kinds, reading its fields, namespace
// labels (namespaceObject), the plan's identity (request.userInfo) and its
// permissions (authorizer, answered by SelfSubjectAccessReviews).
var benchPolicies = []struct{ name, resources, expression string }{
	{"replicas", `{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments, statefulsets]}`, `object.spec.replicas <= 100`},
	{"images", `{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}`, `object.spec.template.spec.containers.all(c, c.image != '')`},
	{"pull-policy", `{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}`, `object.spec.template.spec.containers.all(c, c.imagePullPolicy != 'Never')`},
	{"configmap-size", `{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}`, `!has(object.data) || size(object.data) < 1000`},
	{"service-type", `{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [services]}`, `object.spec.type != 'ExternalName'`},
	{"secret-type", `{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}`, `!has(object.type) || object.type != 'kubernetes.io/dockercfg'`},
	{"namespace-name", `{apiGroups: ['*'], apiVersions: ['*'], operations: [CREATE, UPDATE], resources: [configmaps, services, deployments]}`, `namespaceObject == null || namespaceObject.metadata.name != 'forbidden'`},
	{"not-anonymous", `{apiGroups: ['*'], apiVersions: ['*'], operations: [CREATE, UPDATE], resources: ['*']}`, `request.userInfo.username != 'system:anonymous'`},
	{"may-update", `{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}`, `authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('update').allowed()`},
	{"may-read-secrets", `{apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}`, `authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()`},
}

// writeBenchPolicies writes the ten policies and their bindings into dir.
func writeBenchPolicies(b *testing.B, dir string) string {
	b.Helper()
	var docs []string
	for _, p := range benchPolicies {
		docs = append(docs, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-%[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - %[2]s
  validations:
    - expression: %[3]q
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-%[1]s}
spec:
  policyName: bench-%[1]s
  validationActions: [Deny]
`, p.name, p.resources, p.expression))
	}
	path := filepath.Join(dir, "bench-policies.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchPlanPolicies is the cost of admission policies on a live plan:
// plan --diff of the converged platform without and with the ten
// policies, requests and wall time of each, their ratio (target ≤ 1.1×),
// and the SelfSubjectAccessReviews the policies' authorizer checks sent
// (cached per question within the run).
func (pb *platformBench) benchPlanPolicies(b *testing.B) {
	pb.converge(b)
	policies := writeBenchPolicies(b, pb.dir)
	// Admission judges writes only: on the converged platform every object
	// is kept and no policy runs. The changed copy changes nearly every
	// object (chart labels, configuration, secrets, custom resources), so
	// each is dry-run and judged.
	spec := changedCopy(b, pb.kw.Dir, filepath.Join(pb.dir, pb.kw.Prefix+"-changed"))
	var without, with []measured
	var ssar, ssr int
	for range b.N {
		w := pb.run(b, "khook plan --diff", pb.kw.Prefix, pb.khookCmd("plan", "-f", spec, "--diff", "-o", "json"), 1)
		without = append(without, w)
		m := pb.run(b, "khook plan --diff --policy", pb.kw.Prefix, pb.khookCmd("plan", "-f", spec, "--diff", "-o", "json", "--policy", policies), 1)
		if m.exit != w.exit {
			b.Fatalf("the policies change the plan's exit from %d to %d: they must admit the platform\n%s", w.exit, m.exit, tail(m.out))
		}
		logPlan(b, w)
		with = append(with, m)
		ssar, ssr = m.reviews.ssar, m.reviews.ssr
	}
	req := func(m measured) float64 { return float64(m.counts.Total()) }
	wall := func(m measured) float64 { return m.wall.Seconds() }
	rq, rw := mean(with, req)/mean(without, req), mean(with, wall)/mean(without, wall)
	b.ReportMetric(mean(without, req), "requests-without")
	b.ReportMetric(mean(with, req), "requests-with")
	b.ReportMetric(rq, "requests-ratio")
	b.ReportMetric(rw, "wall-ratio")
	b.ReportMetric(float64(ssar), "ssar")
	b.Logf("plan --diff with %d admission policies over %d objects: %.0f requests (%s) and %.1fs, without: %.0f requests (%s) and %.1fs: ×%.3f requests, ×%.3f wall; SelfSubjectReviews %d, SelfSubjectAccessReviews %d",
		len(benchPolicies), len(pb.kw.Objects), mean(with, req), byVerb(with[len(with)-1].counts), mean(with, wall),
		mean(without, req), byVerb(without[len(without)-1].counts), mean(without, wall), rq, rw, ssr, ssar)
}

// changes rewrite the platform's files so that nearly every object
// differs from the applied one.
var changes = strings.NewReplacer("team: team-", "team: moved-", "feature-", "flag-",
	"password: not-a-real-password-", "password: changed-password-")

// crChanges change the custom resources (crs.yaml; the CRDs' schemas name
// the same field).
var crChanges = strings.NewReplacer("  owner: ", "  owner: moved-")

// changedCopy copies the workload in src to dst with changes applied and
// returns its spec.
func changedCopy(b *testing.B, src, dst string) string {
	b.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case filepath.Base(rel) == "crs.yaml":
			data = []byte(crChanges.Replace(string(data)))
		case strings.HasPrefix(rel, "values") || strings.HasPrefix(rel, "manifests"):
			data = []byte(changes.Replace(string(data)))
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		b.Fatalf("cannot copy the platform workload %s: %v", src, err)
	}
	return filepath.Join(dst, "khook.yaml")
}

// logPlan logs what a plan predicts: its totals and the steps it
// predicts to fail (the same with and without the policies).
func logPlan(b *testing.B, m measured) {
	var doc struct {
		Totals map[string]int `json:"totals"`
		Steps  []struct {
			Name, Action, Reason string
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(m.stdout), &doc); err != nil {
		b.Fatalf("khook plan -o json printed no plan document: %v\n%s", err, tail(m.out))
	}
	var failing []string
	for _, s := range doc.Steps {
		if s.Action == "fail" {
			failing = append(failing, s.Name+": "+s.Reason)
		}
	}
	b.Logf("plan of the changed platform: exit %d, totals %v; steps it predicts to fail: %q", m.exit, doc.Totals, failing)
}
