package e2e

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/test/e2e/apiproxy"
)

// remoteSource is a chart repository, URL source or OCI reference on a
// public host: examples that use one need the internet, which tests lack.
var remoteSource = regexp.MustCompile(`(?m)^[^#\n]*\b(repo|url|chart):\s*["']?(https?|oci)://`)

// exampleInputs are the variables an example documents it needs.
var exampleInputs = map[string]struct{ args, env []string }{
	"variables/khook.yaml": {
		args: []string{"--var-file", "examples/variables/vars.yaml"},
		env:  []string{"KHOOK_SECRET_REGISTRY_TOKEN=e2e-registry-token"},
	},
	"inputs/khook.yaml": {
		args: []string{"--var-file", "examples/inputs/vars.yaml"},
		env:  []string{"KHOOK_SECRET_DNS_TOKEN=e2e-dns-token"},
	},
	"sops/khook.yaml": {env: []string{"SOPS_AGE_KEY_FILE=examples/sops/TEST-ONLY-age.key"}},
	// The spec passes the example rules and admission policy, applied with them.
	"policies/khook.yaml": {args: []string{"--policy", "examples/policies/rules.yaml", "--policy", "examples/policies/admission.yaml"}},
}

// offlineExamples lists every khook spec under examples/ that needs no
// internet, relative to examples/.
func offlineExamples(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(repoRoot, "examples")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^kind:\s*Khook\b`).Match(b) {
			return nil // a manifest, values file or kustomization
		}
		rel, _ := filepath.Rel(root, path)
		if remoteSource.Match(b) {
			t.Logf("skipping examples/%s: it fetches from the internet", rel)
			return nil
		}
		found = append(found, rel)
		return nil
	})
	must(t, err)
	sort.Strings(found)
	return found
}

func TestOfflineExamplesApplyTwice(t *testing.T) {
	examples := offlineExamples(t)
	if len(examples) == 0 {
		t.Fatal("no offline example under examples/")
	}
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			in := exampleInputs[ex]
			args := append([]string{"apply", "-f", filepath.Join("examples", ex), "-o", "json"}, in.args...)
			for run := 1; run <= 2; run++ {
				out := khook(t, invocation{Args: args, Env: in.env, Dir: repoRoot})
				if out.Code != 0 || out.Results == nil || out.Results.Status != model.RunOK {
					t.Fatalf("apply #%d of examples/%s: exit %d\nstdout:\n%s\nstderr:\n%s", run, ex, out.Code, out.Stdout, out.Stderr)
				}
				for _, s := range out.Results.Steps {
					if s.Status != model.StatusOK && s.Status != model.StatusSkipped {
						t.Errorf("apply #%d: step %s is %s", run, s.Name, s.Status)
					}
				}
			}
		})
	}
}

// TestQuickstartSecondApplyWritesOnlyTheJob: once converged, a re-run of the
// quickstart sends no create, update, patch or delete except the job step's
// (the previous run's Job deleted, the new one created) and leaves every
// Helm release at its revision.
func TestQuickstartSecondApplyWritesOnlyTheJob(t *testing.T) {
	args := []string{"apply", "-f", "examples/quickstart.yaml", "-o", "json"}
	first := khook(t, invocation{Args: args, Dir: repoRoot})
	if first.Code != 0 {
		t.Fatalf("first apply: exit %d\nstderr:\n%s", first.Code, first.Stderr)
	}
	before := helmRevisions(t)

	proxy := apiproxy.Start(t, kc.RESTConfig)
	second := khook(t, invocation{Args: args, Dir: repoRoot, Kubeconfig: proxy.Kubeconfig})
	if second.Code != 0 {
		t.Fatalf("second apply: exit %d\nstderr:\n%s", second.Code, second.Stderr)
	}
	writes, dryRuns := proxy.Writes()
	want := []string{
		"DELETE /apis/batch/v1/namespaces/demo/jobs/hello",
		"POST /apis/batch/v1/namespaces/demo/jobs",
	}
	if d := cmp.Diff(want, writes); d != "" {
		t.Errorf("writes of the second apply (-want +got):\n%s", d)
	}
	if len(dryRuns) > 0 {
		t.Logf("dry-run requests (persist nothing): %v", dryRuns)
	}
	if d := cmp.Diff(before, helmRevisions(t)); d != "" {
		t.Errorf("Helm release records changed (-before +after):\n%s", d)
	}
}

// helmRevisions lists every Helm release record (Secrets owned by helm),
// which names release and revision: sh.helm.release.v1.<name>.v<revision>.
func helmRevisions(t *testing.T) []string {
	t.Helper()
	secrets, err := kc.Client.CoreV1().Secrets("").List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
	must(t, err)
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Namespace+"/"+s.Name)
	}
	sort.Strings(names)
	return names
}
