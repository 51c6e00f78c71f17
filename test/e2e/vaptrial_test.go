package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The held-out trial of #49's acceptance: admission policies of other
// projects than the conformance's (test/vaptrial/SOURCES.md: Kubernetes'
// documentation, KEDA's, Gateway API, Istio), kept out of test/testdata
// so the code was not fitted to them, judged as TestVAPConformance judges
// its own; and those the API server refuses must be refused by khook
// validate. KHOOK_VAP_TRIAL names another directory of the same layout.
func TestVAPTrial(t *testing.T) {
	dir := os.Getenv("KHOOK_VAP_TRIAL")
	if dir == "" {
		dir = filepath.Join(repoRoot, "test", "vaptrial")
	}
	policies := loadVAPDir(t, dir)
	if len(policies) == 0 {
		t.Skipf("no trial policies in %s", dir)
	}
	srv := newAPIServer(t)
	var rows []vapTally
	for _, p := range policies {
		t.Run(filepath.Base(p.dir), func(t *testing.T) {
			if p.Refused {
				refusedAlike(t, srv, p)
				return
			}
			if crds := filepath.Join(p.dir, "crds.yaml"); fileExists(crds) {
				srv.installCRD(t, crds)
			}
			ns := p.Namespace
			if ns == "" {
				ns = namespace(t)
			}
			if len(p.NamespaceLabels) > 0 {
				labelNamespace(t, ns, p.NamespaceLabels)
			}
			rows = append(rows, conformPolicy(t, srv, p, ns))
		})
	}
	t.Log("admission trial, khook plan --policy against the API server's dry-run create:\n" + vapTable(rows))
	var cases, offline int
	for _, r := range rows {
		cases, offline = cases+r.cases-r.refused, offline+r.offAgree
	}
	if offline*10 < cases*9 { // #49's acceptance: offline agrees on ≥ 90 %
		t.Errorf("the offline plan agreed with the API server on %d of %d objects, under 90 %%", offline, cases)
	}
}

// labelNamespace sets labels on ns for the test.
func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	var parts []string
	for k, v := range labels {
		parts = append(parts, `"`+k+`":"`+v+`"`)
	}
	patch := []byte(`{"metadata":{"labels":{` + strings.Join(parts, ",") + `}}}`)
	_, err := kc.Client.CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, patch, metav1.PatchOptions{})
	must(t, err)
}

// refusedAlike: the API server refuses p's policy or binding (a dry-run
// create), and khook validate --policy refuses it too, exit 2.
func refusedAlike(t *testing.T, srv *apiServer, p vapPolicy) {
	var serverSays []string
	for _, f := range p.policyFiles() {
		for _, obj := range readObjects(t, f) {
			ri, err := srv.resource(obj, "")
			must(t, err)
			_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			if err != nil {
				serverSays = append(serverSays, err.Error())
			}
		}
	}
	if len(serverSays) == 0 {
		t.Fatalf("the API server accepts %s and its binding; the case expects a refusal", p.Policy)
	}
	spec := writeSpec(t, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: trial}\nsteps:\n  - name: w\n    apply:\n      namespace: default\n      manifests:\n        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: trial}}'\n")
	args := []string{"validate", "-f", spec}
	for _, f := range p.policyFiles() {
		args = append(args, "--policy", f)
	}
	out := khook(t, invocation{Args: args})
	t.Logf("%s: the API server: %s; khook validate (exit %d): %s", p.Policy, strings.Join(serverSays, "; "), out.Code, strings.TrimSpace(out.Stderr))
	if out.Code != 2 {
		t.Errorf("khook validate --policy on %s: exit %d, want 2 (the API server refuses it: %s)\n%s%s", p.Policy, out.Code, strings.Join(serverSays, "; "), out.Stdout, out.Stderr)
	}
}
