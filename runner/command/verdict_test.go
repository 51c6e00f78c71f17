package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/manifest"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

// One step of every type; MSG, A and T change what helm, apply and patch
// would write. No state record: every step runs every time.
const verdictSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: verdicts
defaults:
  timeout: 60s
steps:
  - name: release
    helm:
      chart: %[2]s
      namespace: %[1]s
      values:
        message: ${MSG}
        replicaCount: 1
  - name: config
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              a: "${A}"
  - name: tweak
    needs: [config]
    patch:
      target: configmap/settings
      namespace: %[1]s
      type: merge
      patch:
        metadata:
          labels:
            tweaked: "${T}"
  - name: ready
    needs: [config]
    wait:
      for: jsonpath={.data.a}=${A}
      on: configmap/settings
      namespace: %[1]s
  - name: cleanup
    delete:
      resource: configmap/obsolete
      namespace: %[1]s
      ignoreNotFound: true
  - name: migrate
    needs: [config]
    job:
      image: busybox
      namespace: %[1]s
  - name: bounce
    rollout:
      restart: deployment/web
      namespace: %[1]s
  - name: crds
    helm:
      chart: %[5]s
      namespace: %[1]s
      crds: only
      values:
        group: %[1]s.crdsonly.khook.test
        color: "${A}"
  - name: gadgets
    apply:
      waitFor: condition=Established
      manifests:
        - file: %[4]s
  - name: caps
    needs: [gadgets]
    helm:
      chart: %[3]s
      namespace: %[1]s
      values:
        message: ${MSG}
  - name: sside
    apply:
      serverSide: true
      namespace: %[1]s
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: ssa}, data: {b: "${A}"}}'
  - name: made
    apply:
      namespace: %[1]s-made
      createNamespace: true
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: made}, data: {a: "${A}"}}'
`

// conflictSpec installs a release whose ConfigMap is the one release caps
// of verdictSpec owns.
const conflictSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: conflict
defaults:
  timeout: 60s
steps:
  - name: intruder
    helm:
      chart: %[2]s
      namespace: %[1]s
      values:
        name: caps-caps
`

// verdictCRD is a CRD of group verdict.khook.test: the caps chart asks
// .Capabilities.APIVersions.Has for its kinds Widget (served before any
// plan) and Gadget (registered by step gadgets of the same plan).
func verdictCRD(kind string) string {
	lower := strings.ToLower(kind)
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]ss.verdict.khook.test
spec:
  group: verdict.khook.test
  scope: Namespaced
  names: {kind: %[1]s, plural: %[2]ss, singular: %[2]s, listKind: %[1]sList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, kind, lower)
}

// verdict folds what a step did into the plan's vocabulary.
func verdict(r model.StepResult) model.Action {
	did := map[model.Did]bool{}
	for _, c := range r.Changes {
		did[c.Action] = true
	}
	switch {
	case did[model.DidInstall]:
		return model.ActionInstall
	case did[model.DidUpgrade]:
		return model.ActionUpgrade
	case did[model.DidConfigure], did[model.DidReplace]:
		return model.ActionConfigure
	case did[model.DidCreate]:
		return model.ActionCreate
	case did[model.DidDelete], did[model.DidUninstall]:
		return model.ActionDelete
	case did[model.DidRun]:
		return model.ActionRun
	case did[model.DidRestart]:
		return model.ActionRestart
	case did[model.DidUnchanged]:
		return model.ActionUnchanged
	}
	return model.ActionNoop
}

// Plan and apply agree, step by step, on every step type for a fresh
// namespace, a converged one and a changed one: what plan predicts is what
// apply then does. A step plan cannot assess (its target comes with an
// earlier step) is unknown and left out; plan's "wait" (the condition does
// not hold yet) is apply's no-op (it waited, changed nothing).
func TestPlanAndApplyAgreeOnEveryStepType(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	chart, _ := filepath.Abs("../../test/testdata/charts/demo")
	capsChart, _ := filepath.Abs("../../test/testdata/charts/caps")
	crdsChart, _ := filepath.Abs("../../test/testdata/charts/crdsonly")
	t.Cleanup(func() {
		_ = testCluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns+"-made", metav1.DeleteOptions{})
		for _, n := range []string{"things." + ns + ".crdsonly.khook.test", "gizmos.crdsonly.khook.io"} {
			_ = clients.Dynamic.Resource(kube.CRDMapping.Resource).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	dir := t.TempDir()
	gadgets := filepath.Join(dir, "gadgets.yaml")
	if err := os.WriteFile(gadgets, []byte(verdictCRD("Gadget")), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(verdictSpec, ns, chart, capsChart, gadgets, crdsChart)), 0o644); err != nil {
		t.Fatal(err)
	}
	createWeb(t, ns)
	establish(ctx, t, clients, verdictCRD("Widget"))
	// What the caps chart's lookup reads.
	seed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seed"}, Data: map[string]string{"token": "abc"}}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, seed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := &Configuration{Clients: clients}

	for _, tc := range []struct {
		name    string
		vars    []string
		obsolet bool // configmap/obsolete exists for delete to remove
		changes bool // the plan must say the cluster changes
	}{
		{"fresh", []string{"MSG=one", "A=1", "T=yes"}, true, true},
		{"converged", []string{"MSG=one", "A=1", "T=yes"}, false, false},
		{"changed", []string{"MSG=two", "A=2", "T=no"}, true, true},
		// A second upgrade: revision 2 -> 3, IsUpgrade stays true.
		{"changed again", []string{"MSG=three", "A=3", "T=yes"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.obsolet {
				_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "obsolete"}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
			}
			s, err := spec.Load(spec.LoadOptions{Files: []string{file}, Set: tc.vars})
			if err != nil {
				t.Fatal(err)
			}
			p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			watched := []string{"caps-caps", "ssa"}
			before := configMaps(ctx, t, ns, watched...)
			res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
			if err != nil || res.Status != model.RunOK {
				t.Fatalf("apply: %v %+v", err, res)
			}
			got := map[string]model.StepResult{}
			for _, r := range res.Steps {
				got[r.Name] = r
			}
			for _, ps := range p.Steps {
				t.Logf("%s: plan %s, apply %s", ps.Name, ps.Action, verdict(got[ps.Name]))
				want := ps.Action
				switch want {
				case model.ActionUnknown:
					if tc.name != "fresh" {
						t.Errorf("%s: plan could not assess %s on an existing namespace: %s", tc.name, ps.Name, ps.Reason)
					}
					continue
				case model.ActionWait:
					want = model.ActionNoop
				}
				if v := verdict(got[ps.Name]); v != want {
					t.Errorf("%s: step %s: plan predicted %s, apply did %s (%v)", tc.name, ps.Name, ps.Action, v, got[ps.Name].Changes)
				}
				// An apply step's objects, the namespace createNamespace
				// makes among them, are the ones apply reports.
				if ps.Type == spec.TypeApply {
					var planned, did []string
					for _, o := range ps.Objects {
						planned = append(planned, fmt.Sprintf("%s %s %s/%s", o.Action.Done(), o.Kind, o.Namespace, o.Name))
					}
					for _, c := range got[ps.Name].Changes {
						did = append(did, fmt.Sprintf("%s %s %s/%s", c.Action, c.Kind, c.Namespace, c.Name))
					}
					sort.Strings(planned)
					sort.Strings(did)
					if fmt.Sprint(planned) != fmt.Sprint(did) {
						t.Errorf("%s: step %s: plan's objects %q, apply's changes %q", tc.name, ps.Name, planned, did)
					}
				}
			}
			if p.Changes != tc.changes || res.Changed() != tc.changes {
				t.Errorf("%s: plan changes=%v, apply changed=%v, want %v\n%s", tc.name, p.Changes, res.Changed(), tc.changes, model.ChangesSentence(res))
			}
			// The plan's diff is what apply then changes: the chart's
			// capabilities, revision, IsUpgrade and lookup, and the
			// server-side apply.
			after := configMaps(ctx, t, ns, watched...)
			for step, name := range map[string]string{"caps": "caps-caps", "sside": "ssa"} {
				var diff string
				for _, ps := range p.Steps {
					if ps.Name == step {
						diff = ps.Diff
					}
				}
				planned := plannedData(diff, "/ConfigMap/"+ns+"/"+name, before[name], after[name])
				applied := changedData(before[name], after[name])
				if fmt.Sprint(planned) != fmt.Sprint(applied) {
					t.Errorf("%s: step %s: the plan's diff of ConfigMap %s changes %v, apply changed %v\n%s", tc.name, step, name, planned, applied, diff)
				}
			}
		})
	}
	if t.Failed() {
		return
	}

	t.Run("rejected", rejections)

	// A release whose object another release owns: plan says apply fails,
	// with apply's sentence.
	t.Run("ownership conflict", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "khook.yaml")
		if err := os.WriteFile(file, []byte(fmt.Sprintf(conflictSpec, ns, capsChart)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ps, r := p.Steps[0], res.Steps[0]
		t.Logf("plan: %s: %s\napply: %s: %s", ps.Action, ps.Reason, r.Status, r.Error)
		if ps.Action != model.ActionFail || r.Status != model.StatusFailed {
			t.Fatalf("plan predicted %s (%s), apply %s (%s): want fail and failed", ps.Action, ps.Reason, r.Status, r.Error)
		}
		if ps.Reason != r.Error {
			t.Errorf("plan and apply word the failure differently:\nplan:  %s\napply: %s", ps.Reason, r.Error)
		}
		if !strings.Contains(ps.Reason, "invalid ownership metadata") {
			t.Errorf("plan's reason does not name the ownership conflict: %s", ps.Reason)
		}
		if model.TotalsLine(p) != "Plan: 1 would fail." {
			t.Errorf("totals line = %q", model.TotalsLine(p))
		}
	})

	// delete.release: the release the table installed, then absent, with
	// ignoreNotFound true (the default) and false. Plan predicts what
	// apply then does; an absent release that must exist fails both, in
	// the same sentence.
	for _, tc := range []struct {
		name, ignore string
		want         model.Action
	}{
		{"delete.release present", "", model.ActionDelete},
		{"delete.release absent", "", model.ActionNoop},
		{"delete.release absent ignoreNotFound true", "\n      ignoreNotFound: true", model.ActionNoop},
		{"delete.release absent ignoreNotFound false", "\n      ignoreNotFound: false", model.ActionFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "khook.yaml")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(deleteReleaseSpec, ns, tc.ignore)), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			ps, r := p.Steps[0], res.Steps[0]
			t.Logf("plan: %s: %s\napply: %s: %s %s", ps.Action, ps.Reason, r.Status, r.Detail, r.Error)
			if ps.Action != tc.want {
				t.Errorf("plan predicted %s (%s), want %s", ps.Action, ps.Reason, tc.want)
			}
			if tc.want == model.ActionFail {
				if r.Status != model.StatusFailed {
					t.Fatalf("apply %s (%s), want failed", r.Status, r.Detail)
				}
				if ps.Reason != r.Error {
					t.Errorf("plan and apply word the failure differently:\nplan:  %s\napply: %s", ps.Reason, r.Error)
				}
				return
			}
			if v := verdict(r); r.Status == model.StatusFailed || v != tc.want {
				t.Errorf("plan predicted %s, apply did %s (%s %v)", ps.Action, v, r.Error, r.Changes)
			}
		})
	}
}

// deleteReleaseSpec uninstalls the release verdictSpec installs: %[1]s is
// the test namespace, %[2]s an ignoreNotFound line or nothing.
const deleteReleaseSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: delete-release
defaults:
  timeout: 60s
steps:
  - name: uninstall
    delete:
      release: release
      namespace: %[1]s%[2]s
`

// rejectedSpec is one step the API server refuses on apply: %[1]s is the
// test namespace, %[2]s the step.
const rejectedSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: rejected
defaults:
  timeout: 60s
steps:
%[2]s`

// rejections: whatever the API server refuses on apply plans as fail, for
// every step type that writes, with apply's own sentence in one line (the
// object, the field, the server's reason; no struct dump), and apply then
// writes nothing of the refused object.
func rejections(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	createWeb(t, ns)
	chart, _ := filepath.Abs("../../test/testdata/charts/demo")
	immutable, _ := filepath.Abs("../../test/testdata/charts/immutable")
	installImmutable(ctx, t, clients, ns, immutable)
	deny := admissionDenial(ctx, t, ns)
	limited := limitedClients(ctx, t, ns)
	selectorChange := fmt.Sprintf(`  - name: web
    apply:
      namespace: %s
      manifests:
        - inline: |
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web}
            spec:
              replicas: 1
              selector: {matchLabels: {app: web2}}
              template:
                metadata: {labels: {app: web2}}
                spec: {containers: [{name: web, image: example.invalid/web}]}
`, ns)
	for _, tc := range []struct {
		name    string
		step    string
		clients *kube.Clients
		want    []string // in the one-line reason
		absent  string   // a ConfigMap apply must not create
	}{
		{name: "apply: immutable field", step: selectorChange, want: []string{"deployment.apps/web in namespace " + ns, "spec.selector", "field is immutable", "onImmutable: recreate"}},
		{name: "patch: immutable field", step: fmt.Sprintf(`  - name: web
    patch:
      target: deployment/web
      namespace: %s
      type: merge
      patch: {spec: {selector: {matchLabels: {tier: x}}, template: {metadata: {labels: {tier: x}}}}}
`, ns), want: []string{"deployment.apps/web", "spec.selector", "field is immutable"}},
		{name: "apply: strict typo", step: fmt.Sprintf(`  - name: typo
    apply:
      namespace: %s
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: typo}, datta: {a: "1"}}'
`, ns), want: []string{"configmap/typo in namespace " + ns, `unknown field "datta"`}, absent: "typo"},
		{name: "apply: missing namespace", step: `  - name: lost
    apply:
      namespace: nowhere-` + ns + `
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: lost}}'
`, want: []string{`namespace "nowhere-` + ns + `" does not exist`}},
		{name: "job: missing namespace", step: `  - name: lost
    job:
      image: busybox
      namespace: nowhere-` + ns + `
`, want: []string{"job/lost in nowhere-" + ns, "createNamespace"}},
		{name: "helm: missing namespace", step: fmt.Sprintf(`  - name: lost
    helm:
      chart: %s
      namespace: nowhere-%s
`, chart, ns), want: []string{"namespace nowhere-" + ns + " not found"}},
		{name: "apply: admission denial", step: fmt.Sprintf(`  - name: denied
    apply:
      namespace: %s
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: denied}}'
`, ns), want: []string{"configmap/denied in namespace " + ns, deny}, absent: "denied"},
		{name: "helm: admission denial", step: fmt.Sprintf(`  - name: denied
    helm:
      chart: %s
      namespace: %s
`, immutable, ns), want: []string{"install failed", "ConfigMap " + ns + "/denied-settings", deny}, absent: "denied-settings"},
		{name: "apply: RBAC forbidden", clients: limited, step: fmt.Sprintf(`  - name: forbidden
    apply:
      namespace: %s
      manifests:
        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: forbidden}}'
`, ns), want: []string{"configmap/forbidden in namespace " + ns, "forbidden", "cannot create resource"}, absent: "forbidden"},
		{name: "patch: RBAC forbidden", clients: limited, step: fmt.Sprintf(`  - name: forbidden
    patch:
      target: configmap/seen
      namespace: %s
      type: merge
      patch: {data: {a: "2"}}
`, ns), want: []string{"configmap/seen", "forbidden", "cannot patch resource"}},
		{name: "delete: RBAC forbidden", clients: limited, step: fmt.Sprintf(`  - name: forbidden
    delete:
      resource: configmap/seen
      namespace: %s
`, ns), want: []string{"configmap/seen", "forbidden", "cannot delete resource"}},
		{name: "rollout: RBAC forbidden", clients: limited, step: fmt.Sprintf(`  - name: forbidden
    rollout:
      restart: deployment/web
      namespace: %s
`, ns), want: []string{"deployment.apps/web", "forbidden", "cannot patch resource"}},
		{name: "job: RBAC forbidden", clients: limited, step: fmt.Sprintf(`  - name: forbidden
    job:
      image: busybox
      namespace: %s
`, ns), want: []string{"job/forbidden in " + ns, "forbidden", "cannot create resource"}},
		{name: "helm: immutable field", step: fmt.Sprintf(`  - name: imm
    helm:
      chart: %s
      namespace: %s
      values: {tag: "2"}
`, immutable, ns), want: []string{"Job " + ns + "/imm-migrate", "spec.template", "field is immutable", "onImmutable: recreate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "khook.yaml")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(rejectedSpec, ns, tc.step)), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
			if err != nil {
				t.Fatal(err)
			}
			c := clients
			if tc.clients != nil {
				c = tc.clients
			}
			cfg := &Configuration{Clients: c}
			before := webSelector(ctx, t, ns)
			p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			ps, r := p.Steps[0], res.Steps[0]
			t.Logf("plan: %s: %s\napply: %s: %s", ps.Action, ps.Reason, r.Status, r.Error)
			if ps.Action != model.ActionFail || r.Status != model.StatusFailed {
				t.Fatalf("plan predicted %s (%s), apply %s (%s): want fail and failed", ps.Action, ps.Reason, r.Status, r.Error)
			}
			if ps.Reason != r.Error {
				t.Errorf("plan and apply word the failure differently:\nplan:  %s\napply: %s", ps.Reason, r.Error)
			}
			for _, w := range tc.want {
				if !strings.Contains(ps.Reason, w) {
					t.Errorf("the reason does not say %q: %s", w, ps.Reason)
				}
			}
			if strings.Contains(ps.Reason, "\n") || strings.Contains(ps.Reason, "{") || len(ps.Reason) > 700 {
				t.Errorf("the reason is not one short line (a struct dump?): %s", ps.Reason)
			}
			if model.TotalsLine(p) != "Plan: 1 would fail." {
				t.Errorf("totals line = %q", model.TotalsLine(p))
			}
			if after := webSelector(ctx, t, ns); after != before {
				t.Errorf("apply changed deployment/web's selector: %s -> %s", before, after)
			}
			if tc.absent != "" {
				if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, tc.absent, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("ConfigMap %s exists after the refused apply (%v)", tc.absent, err)
				}
			}
		})
	}
}

// installImmutable installs release imm of the immutable chart (tag 1).
func installImmutable(ctx context.Context, t *testing.T, clients *kube.Clients, ns, chart string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "khook.yaml")
	step := fmt.Sprintf("  - name: imm\n    helm:\n      chart: %s\n      namespace: %s\n", chart, ns)
	if err := os.WriteFile(file, []byte(fmt.Sprintf(rejectedSpec, ns, step)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&ApplyCommand{Config: &Configuration{Clients: clients}}).Run(ctx, s)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("install of the immutable chart: %v %+v", err, res)
	}
}

// webSelector is deployment/web's selector, as text.
func webSelector(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	d, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return metav1.FormatLabelSelector(d.Spec.Selector)
}

// admissionDenial installs an admission policy (CEL, no webhook server)
// that denies ConfigMaps whose name starts with "denied" in ns, and
// returns its message.
func admissionDenial(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	const msg = "configmaps named denied... are refused by policy"
	name := "deny-" + ns
	deny := admissionregistrationv1.Deny
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: `!object.metadata.name.startsWith("denied")`, Message: msg}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}}
	ar := testCluster.Client.AdmissionregistrationV1()
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ar.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = ar.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// The policy is enforced once the API server has loaded it: await a
	// dry-run create that it refuses.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "denied"}}
	for {
		_, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), msg) {
			return msg
		}
		if ctx.Err() != nil {
			t.Fatalf("the admission policy was not enforced before the deadline: %v", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // the API server's policy reload has no watchable signal
		}
	}
}

// limitedClients act as a user who may read ConfigMaps in ns (and
// namespaces), and write nothing: every write is forbidden.
func limitedClients(ctx context.Context, t *testing.T, ns string) *kube.Clients {
	t.Helper()
	user := "limited-" + ns
	rbac := testCluster.Client.RbacV1()
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces", "secrets"}, Verbs: read},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: read},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: read},
	}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := rbac.RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	seen := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}, Data: map[string]string{"a": "1"}}
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, seen, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(testCluster.RESTConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := kube.NewClientsForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// configMaps reads the named ConfigMaps' data (nil for an absent one).
func configMaps(ctx context.Context, t *testing.T, ns string, names ...string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, n := range names {
		cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			out[n] = nil
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[n] = cm.Data
	}
	return out
}

// changedData is "key: before -> after" for each data key that differs
// ("" for an absent side), sorted.
func changedData(before, after map[string]string) []string {
	var out []string
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		b, inB := before[k]
		a, inA := after[k]
		if b != a || inB != inA {
			out = append(out, k+": "+b+" -> "+a)
		}
	}
	sort.Strings(out)
	return out
}

// plannedData reads, from a plan's unified diff, the data lines of the
// object whose title ends in suffix, as changedData words them: lines
// under a "data:" line of the hunk, or of a key the object's data has
// before or after (a hunk may start below "data:").
func plannedData(diff, suffix string, known ...map[string]string) []string {
	old, next := map[string]string{}, map[string]string{}
	in, inData := false, false
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ "):
			if strings.HasPrefix(line, "+++ ") {
				in = strings.HasSuffix(line, suffix)
			}
			continue
		case !in || line == "" || strings.HasPrefix(line, "@@"):
			continue
		}
		body := line[1:]
		if !strings.HasPrefix(body, " ") {
			inData = body == "data:"
			continue
		}
		if !strings.HasPrefix(body, "  ") || strings.HasPrefix(body, "   ") {
			continue
		}
		var kv map[string]string
		if err := yaml.Unmarshal([]byte(strings.TrimSpace(body)), &kv); err != nil {
			continue
		}
		for k, v := range kv {
			if !inData && !hasKey(k, known) {
				continue
			}
			switch line[0] {
			case '-':
				old[k] = v
			case '+':
				next[k] = v
			}
		}
	}
	return changedData(old, next)
}

func hasKey(k string, maps []map[string]string) bool {
	for _, m := range maps {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// establish creates a CRD (if absent) and waits until it is served.
func establish(ctx context.Context, t *testing.T, c *kube.Clients, crdYAML string) {
	t.Helper()
	objs, err := manifest.DecodeManifests([]byte(crdYAML))
	if err != nil {
		t.Fatal(err)
	}
	crd := objs[0]
	m, err := c.MapObject(ctx, crd, "")
	if err != nil {
		t.Fatal(err)
	}
	ri := c.Dynamic.Resource(m.Resource)
	if _, err := ri.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + crd.GetName()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return
			}
		}
	}
	t.Fatalf("CRD %s: not established before the test's deadline", crd.GetName())
}

func createWeb(t *testing.T, ns string) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web"}}}},
	}}
	if _, err := testCluster.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
