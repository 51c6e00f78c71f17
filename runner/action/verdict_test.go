package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/report"
	"github.com/khook/khook/runner/kube"
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
`

// verdict folds what a step did into the plan's vocabulary.
func verdict(r report.StepResult) report.Action {
	did := map[report.Did]bool{}
	for _, c := range r.Changes {
		did[c.Action] = true
	}
	switch {
	case did[report.DidInstall]:
		return report.ActionInstall
	case did[report.DidUpgrade]:
		return report.ActionUpgrade
	case did[report.DidConfigure]:
		return report.ActionConfigure
	case did[report.DidCreate]:
		return report.ActionCreate
	case did[report.DidDelete], did[report.DidUninstall]:
		return report.ActionDelete
	case did[report.DidRun]:
		return report.ActionRun
	case did[report.DidRestart]:
		return report.ActionRestart
	case did[report.DidUnchanged]:
		return report.ActionUnchanged
	}
	return report.ActionNoop
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
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(verdictSpec, ns, chart)), 0o644); err != nil {
		t.Fatal(err)
	}
	createWeb(t, ns)
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
			p, err := (&Plan{Config: cfg}).Run(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			res, err := (&Apply{Config: cfg}).Run(ctx, s)
			if err != nil || res.Status != report.RunOK {
				t.Fatalf("apply: %v %+v", err, res)
			}
			got := map[string]report.StepResult{}
			for _, r := range res.Steps {
				got[r.Name] = r
			}
			for _, ps := range p.Steps {
				t.Logf("%s: plan %s, apply %s", ps.Name, ps.Action, verdict(got[ps.Name]))
				want := ps.Action
				switch want {
				case report.ActionUnknown:
					if tc.name != "fresh" {
						t.Errorf("%s: plan could not assess %s on an existing namespace: %s", tc.name, ps.Name, ps.Reason)
					}
					continue
				case report.ActionWait:
					want = report.ActionNoop
				}
				if v := verdict(got[ps.Name]); v != want {
					t.Errorf("%s: step %s: plan predicted %s, apply did %s (%v)", tc.name, ps.Name, ps.Action, v, got[ps.Name].Changes)
				}
			}
			if p.Changes != tc.changes || res.Changed() != tc.changes {
				t.Errorf("%s: plan changes=%v, apply changed=%v, want %v\n%s", tc.name, p.Changes, res.Changed(), tc.changes, report.ChangesSentence(res))
			}
		})
	}
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
