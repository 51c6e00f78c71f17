package helmstep

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// A failed install with wait names the stuck Deployment and its pod, and
// the failed release it left is a change.
func TestFailedInstallIsDiagnosedAndAChange(t *testing.T) {
	f := newFixture(t)
	st := f.step("stuck", spec.Helm{Chart: "./charts/demo", Wait: true,
		Values: map[string]any{"podAnnotations": map[string]any{"khook.test/crash-loop": "true"}}})
	out, err := f.try(st, 5*time.Second)
	if err == nil {
		t.Fatal("an install whose pods crash-loop succeeded")
	}
	d := out.Diagnosis
	if d == nil || len(d.Objects) == 0 || len(d.Pods) != 1 || !strings.Contains(d.Reason, "CrashLoopBackOff: OOMKilled (exit 137), 5 restarts") {
		t.Fatalf("diagnosis = %+v", d)
	}
	if d.RolledBack != "" {
		t.Errorf("rolledBack = %q on a step without atomic", d.RolledBack)
	}
	if len(out.Changes) != 1 || out.Changes[0].Action != model.DidInstall || !out.Changes[0].Failed {
		t.Errorf("changes = %+v, want the failed install", out.Changes)
	}
}

// An atomic install that failed says Helm uninstalled it and why; with the
// release gone, it changed nothing.
func TestAtomicInstallSaysItRolledBack(t *testing.T) {
	f := newFixture(t)
	st := f.step("undone", spec.Helm{Chart: "./charts/demo", Atomic: true,
		Values: map[string]any{"podAnnotations": map[string]any{"khook.test/crash-loop": "true"}}})
	out, err := f.try(st, 8*time.Second)
	if err == nil {
		t.Fatal("an install whose pods crash-loop succeeded")
	}
	d := out.Diagnosis
	if d == nil || !strings.HasPrefix(d.RolledBack, "atomic: Helm uninstalled release undone because its resources were not ready within ") ||
		!strings.Contains(d.Reason, "CrashLoopBackOff") {
		t.Fatalf("diagnosis = %+v", d)
	}
	if len(out.Changes) != 0 {
		t.Errorf("changes = %+v after an atomic uninstall", out.Changes)
	}
}

// A real chart whose release times out says why, whatever ends the wait
// (here the step's deadline, which is Helm's too): the Pending pod with the
// scheduler's reason. metrics-server (unedited, from the corpus) wants more
// replicas than required anti-affinity can place on the three nodes, or a
// volume whose claim no provisioner serves.
func TestRealChartTimeoutSaysWhy(t *testing.T) {
	dir := chartsrc.RealChartsDir(t)
	chart := chartsrc.RealChart(t, dir, "metrics-server", "3.13.1")
	antiAffinity := map[string]any{"podAntiAffinity": map[string]any{
		"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
			"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "metrics-server"}},
			"topologyKey":   "kubernetes.io/hostname",
		}},
	}}
	for _, tc := range []struct {
		name   string
		values map[string]any
		claim  string // a claim to create first, of a class nobody serves
		want   []string
	}{
		{"spread", map[string]any{"replicas": 4, "affinity": antiAffinity},
			"", []string{"Pending: PodScheduled=False Unschedulable: 0/3 nodes are available", "didn't match pod anti-affinity rules", "Available: 3/4"}},
		{"claim", map[string]any{"extraVolumes": []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data"}}}},
			"data", []string{"Pending: PodScheduled=False Unschedulable: 0/3 nodes are available", "pod has unbound immediate PersistentVolumeClaims"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tc.claim != "" {
				createClaim(t, f, tc.claim, "nobody-serves-this")
			}
			// No aggregated API without a backend; no RBAC, whose
			// aggregated-reader ClusterRole has one cluster-wide name that
			// the parallel subtests' releases would both claim.
			values := map[string]any{"apiService": map[string]any{"create": false}, "rbac": map[string]any{"create": false}}
			maps.Copy(values, tc.values)
			st := f.step("ms-"+tc.name, spec.Helm{Chart: chart, Wait: true, Values: values})
			var mu sync.Mutex
			var live []string
			ctx, cancel := context.WithTimeout(kube.WithLiveCache(context.Background()), 8*time.Second)
			defer cancel()
			ctx = model.WithStepProgress(ctx, func(m string) { mu.Lock(); live = append(live, m); mu.Unlock() })
			out, err := f.exec.Execute(ctx, st)
			if err == nil {
				t.Fatal("the install succeeded")
			}
			t.Logf("%v\n%s", err, out.Diagnosis.Text(""))
			// While Helm waited, the blocker was said live.
			mu.Lock()
			said := strings.Join(live, "\n")
			mu.Unlock()
			if want := "Deployment " + f.ns + "/ms-" + tc.name + "-metrics-server: pod ms-" + tc.name + "-metrics-server-"; !strings.Contains(said, want) || !strings.Contains(said, tc.want[1]) {
				t.Errorf("live progress lacks %q and %q:\n%s", want, tc.want[1], said)
			}
			d := out.Diagnosis
			if d == nil {
				t.Fatalf("no diagnosis; error: %v", err)
			}
			text := d.Text("\n")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("diagnosis lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

func createClaim(t *testing.T, f *fixture, name, class string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := f.clients.Typed.CoreV1().PersistentVolumeClaims(f.ns).Create(t.Context(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create claim: %v", err)
	}
}
