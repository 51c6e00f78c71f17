// Package cluster runs khook's end-to-end CLI scenarios that need a real
// control plane (test/cluster): apply's outputs and exit codes against the
// API server. Each script gets its own namespace in $NS and the admin
// kubeconfig in $KUBECONFIG.
package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/internal/cli"
	"github.com/khook/khook/test/cluster"
	"github.com/khook/khook/test/script/scripttest"
)

var kube *cluster.Cluster

// withCluster starts the cluster around the tests, inside testscript's own
// TestMain handling (which runs the khook command when invoked as khook).
type withCluster struct{ m *testing.M }

func (w withCluster) Run() int { return cluster.Main(w.m, &kube) }

func TestMain(m *testing.M) {
	testscript.RunMain(withCluster{m}, map[string]func() int{"khook": cli.Main})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ns, err := kube.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "t-script-", Labels: map[string]string{"khook.test/namespace": "true"}},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			env.Defer(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = kube.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
			})
			env.Setenv("NS", ns.Name)
			env.Setenv("KUBECONFIG", kube.Kubeconfig)
			return nil
		},
		Cmds: scripttest.Cmds,
	})
}
