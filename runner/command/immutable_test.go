package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// recreateSpec changes deployment/web's selector (an apply step under
// defaults.onImmutable: recreate) and the immutable chart's Job template
// (a helm step that says fail; the Job's own annotation recreates it).
const recreateSpec = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: recreate
defaults:
  timeout: 60s
  onImmutable: recreate
steps:
  - name: web
    apply:
      namespace: %[1]s
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
  - name: imm
    onImmutable: fail
    helm:
      chart: %[2]s
      namespace: %[1]s
      values: {tag: "2", recreate: true}
`

// onImmutable: recreate plans the objects whose immutable fields change as
// replace, with their diff; apply deletes and creates them (new UIDs, the
// new selector and image), and the next plan is clean.
func TestOnImmutableRecreateReplaces(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	createWeb(t, ns)
	chart, _ := filepath.Abs("../../test/testdata/charts/immutable")
	installImmutable(ctx, t, clients, ns, chart)
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(recreateSpec, ns, chart)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(spec.LoadOptions{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Configuration{Clients: clients}
	webUID, jobUID := uids(ctx, t, ns)

	p, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range p.Steps {
		t.Logf("plan %s: %s: %s\n%s", ps.Name, ps.Action, ps.Reason, ps.Diff)
		replaced := ""
		for _, o := range ps.Objects {
			if o.Action == model.ActionReplace {
				replaced = o.Kind + " " + o.Name
			}
		}
		want := map[string]string{"web": "Deployment web", "imm": "Job imm-migrate"}[ps.Name]
		if replaced != want || !strings.Contains(ps.Reason, "replaces") || ps.Diff == "" {
			t.Errorf("step %s: plan %s (%s), replaced object %q: want %q replaced, said in the reason, with a diff", ps.Name, ps.Action, ps.Reason, replaced, want)
		}
	}
	res, err := (&ApplyCommand{Config: cfg}).Run(ctx, s)
	if err != nil || res.Status != model.RunOK {
		t.Fatalf("apply: %v %+v", err, res)
	}
	newWeb, newJob := uids(ctx, t, ns)
	if newWeb == webUID || newJob == jobUID {
		t.Errorf("UIDs web %s -> %s, job %s -> %s: want both replaced", webUID, newWeb, jobUID, newJob)
	}
	if sel := webSelector(ctx, t, ns); sel != "app=web2" {
		t.Errorf("deployment/web's selector is %s, want app=web2", sel)
	}
	job, err := testCluster.Client.BatchV1().Jobs(ns).Get(ctx, "imm-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := job.Spec.Template.Spec.Containers[0].Image; img != "example.invalid/migrate:2" {
		t.Errorf("the Job's image is %s, want tag 2", img)
	}
	for _, r := range res.Steps {
		if len(r.Changes) == 0 || (r.Name == "web" && r.Changes[0].Action != model.DidReplace) {
			t.Errorf("step %s: changes %v: want the object replaced", r.Name, r.Changes)
		}
	}

	again, err := (&PlanCommand{Config: cfg, Diff: true}).Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changes {
		for _, ps := range again.Steps {
			t.Logf("%s: %s: %s\n%s", ps.Name, ps.Action, ps.Reason, ps.Diff)
		}
		t.Errorf("the plan after the replacement is not clean: %s", model.TotalsLine(again))
	}
}

// uids are deployment/web's and job/imm-migrate's UIDs.
func uids(ctx context.Context, t *testing.T, ns string) (web, job string) {
	t.Helper()
	d, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := testCluster.Client.BatchV1().Jobs(ns).Get(ctx, "imm-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(d.UID), string(j.UID)
}
