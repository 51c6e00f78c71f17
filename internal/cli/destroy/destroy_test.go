package destroy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/helmstep"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/state"
	"github.com/khook/khook/runner/steps"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) { os.Exit(cluster.Main(m, &testCluster)) }

const specYAML = `apiVersion: khook.io/v1
kind: Khook
metadata:
  name: teardown
defaults:
  timeout: 40s
state:
  namespace: %[1]s
steps:
  - name: app
    helm:
      chart: %[3]s
      namespace: %[2]s
      createNamespace: true
  - name: config
    needs: [app]
    apply:
      namespace: %[1]s
      manifests:
        - inline: |
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              a: "1"
        - file: %[4]s
  - name: migrate
    needs: [config]
    job:
      image: busybox
      namespace: %[1]s
  - name: tweak
    needs: [config]
    patch:
      target: configmap/settings
      namespace: %[1]s
      type: merge
      patch:
        metadata:
          labels:
            tweaked: "true"
`

// dispatch runs each step type on its real executor.
func dispatch(c *kube.Clients, s *spec.Spec, helm *helmstep.Executor) runner.Executor {
	env := steps.NewEnv(c, s.BaseDir, nil)
	byType := map[string]runner.Executor{
		spec.TypeHelm:  helm,
		spec.TypeApply: steps.NewApplyExecutor(env),
		spec.TypeJob:   steps.NewJobExecutor(env),
		spec.TypePatch: steps.NewPatchExecutor(env),
	}
	return runner.ExecutorFunc(func(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
		return byType[st.Type()].Execute(ctx, st)
	})
}

func newFactory() (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	ios, out, errOut := iostreams.Test("")
	return cmdutil.NewFactory(ios), out, errOut
}

func TestDestroyUndoesApplyAndIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := testCluster.Namespace(t)
	made := ns + "-made"
	t.Cleanup(func() {
		_ = testCluster.Client.CoreV1().Namespaces().Delete(context.Background(), made, metav1.DeleteOptions{})
	})
	chart, _ := filepath.Abs("testdata/chart")
	extra, _ := filepath.Abs("testdata/extra.yaml")
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, specYAML, ns, made, chart, extra), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := cmdutil.SpecFlags{Files: []string{file}, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix}
	clients, err := kube.NewClientsForConfig(testCluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}

	// Apply with the real executors and a state record.
	f, _, _ := newFactory()
	s, err := f.LoadSpec(&flags)
	if err != nil {
		t.Fatal(err)
	}
	helm := helmstep.New(clients, s.BaseDir, f.Redactor)
	defer helm.Close()
	sess, err := state.Open(ctx, s, state.Options{Client: clients.Typed})
	if err != nil {
		t.Fatal(err)
	}
	eng := runner.ForSpec(s, dispatch(clients, s, helm))
	eng.Resume, eng.OnFinish = sess.Resume, sess.OnFinish
	for _, r := range eng.Run(ctx) {
		if r.Status != model.StatusOK {
			t.Fatalf("apply: step %s %s: %s", r.Name, r.Status, r.Error)
		}
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	core := testCluster.Client.CoreV1()
	mustExist := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("after apply, %s: %v", what, err)
		}
	}
	_, err = core.ConfigMaps(made).Get(ctx, "app-config", metav1.GetOptions{})
	mustExist("the release's ConfigMap", err)
	_, err = core.ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	mustExist("the applied ConfigMap", err)
	_, err = testCluster.Client.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	mustExist("the job", err)

	// Destroy, twice.
	for run := 1; run <= 2; run++ {
		f, out, errOut := newFactory()
		opts := &Options{F: f, Spec: flags, Output: cmdutil.OutputJSON, Clients: clients}
		err := Run(ctx, opts)
		if code := cmdutil.CodeOf(err); code != 0 {
			t.Fatalf("destroy #%d: exit %d (%v)\n%s\nstderr:\n%s", run, code, err, out.String(), errOut.String())
		}
		var res model.Results
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			t.Fatalf("destroy #%d: stdout is not JSON: %v\n%s", run, err, out.String())
		}
		got := map[string]string{}
		for _, r := range res.Steps {
			got[r.Name] = fmt.Sprintf("%s/%s", r.Type, r.Status)
		}
		want := map[string]string{"app": "helm/ok", "config": "apply/ok", "migrate": "job/ok", "tweak": "patch/skipped"}
		if fmt.Sprint(got) != fmt.Sprint(want) || res.Command != "destroy" || res.Status != model.RunOK {
			t.Errorf("destroy #%d: %s %s, steps %v; want ok with %v", run, res.Command, res.Status, got, want)
		}
	}

	gone := func(what string, err error) {
		t.Helper()
		if !apierrors.IsNotFound(err) {
			t.Errorf("after destroy, %s: %v; want it gone", what, err)
		}
	}
	_, err = core.ConfigMaps(made).Get(ctx, "app-config", metav1.GetOptions{})
	gone("the release's ConfigMap", err)
	releases, err := core.Secrets(made).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(releases.Items) != 0 {
		t.Errorf("after destroy, helm release records: %d, %v; want none", len(releases.Items), err)
	}
	_, err = core.ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	gone("the applied ConfigMap", err)
	_, err = core.Secrets(ns).Get(ctx, "extra", metav1.GetOptions{})
	gone("the applied Secret", err)
	_, err = testCluster.Client.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	gone("the job", err)
	_, err = core.Secrets(ns).Get(ctx, "khook-state-teardown", metav1.GetOptions{})
	gone("the state record", err)
	if _, err := core.Namespaces().Get(ctx, made, metav1.GetOptions{}); err != nil {
		t.Errorf("the namespace createNamespace made: %v; want it kept", err)
	}
}
