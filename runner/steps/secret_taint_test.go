package steps

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/khook/khook/runner/kube"
)

// TestSecretsReadFromTheClusterAreMasked: whatever reads a Secret through
// the run's clients (typed or dynamic; GET, LIST or WATCH), its values are
// registered before the caller sees them, in every printed form; Helm's
// release records are not.
func TestSecretsReadFromTheClusterAreMasked(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx := testCtx(t)
	mk := func(name string, typ corev1.SecretType, data map[string]string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: typ, StringData: data}
		if _, err := testCluster.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("got", corev1.SecretTypeOpaque, map[string]string{"password": "g0t-by-name-pw"})
	mk("listed", corev1.SecretTypeOpaque, map[string]string{"key": "-----BEGIN KEY-----\nlisted-line-one\nlisted-line-two\n-----END KEY-----", "flag": "true"})
	mk("sh.helm.release.v1.app.v1", kube.HelmReleaseType, map[string]string{"release": "release-record-payload"})

	env, _ := newTestEnv(t)
	red := env.Redactor
	if _, err := env.Clients.Typed.CoreV1().Secrets(ns).Get(ctx, "got", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := env.Clients.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"g0t-by-name-pw", base64.StdEncoding.EncodeToString([]byte("g0t-by-name-pw")), "listed-line-one", "listed-line-two"} {
		if got := red.String("x " + leak + " y"); got != "x *** y" {
			t.Errorf("%q is not masked: %q", leak, got)
		}
	}
	if got := red.String("enabled: true release-record-payload"); got != "enabled: true release-record-payload" {
		t.Errorf("a flag or a Helm release record was registered: %q", got)
	}

	// A Secret that arrives through a watch is registered before the event.
	w, err := env.Clients.Typed.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=watched"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mk("watched", corev1.SecretTypeOpaque, map[string]string{"token": "w4tched-t0ken"})
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			if got := red.String("w4tched-t0ken"); got != "***" {
				t.Errorf("the watched Secret is not masked when its event arrives: %q", got)
			}
			break
		}
	}
}

func TestJobReadsTheSecretsItsPodReferences(t *testing.T) {
	ns := testCluster.Namespace(t)
	ctx := testCtx(t)
	for name, v := range map[string]string{"env": "fr0m-env-ref", "envfrom": "fr0m-env-from", "vol": "fr0m-a-volume", "proj": "fr0m-projected"} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"v": v}}
		if _, err := testCluster.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env"}, Key: "v"}}}},
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "envfrom"}}}}}},
		Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj"}}}}}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent"}}},
		},
	}}
	env, _ := newTestEnv(t)
	NewJobExecutor(env).readPodSecrets(ctx, pod)
	log := "echo fr0m-env-ref fr0m-env-from fr0m-a-volume fr0m-projected"
	if got := env.Redactor.String(log); strings.Contains(got, "fr0m") {
		t.Errorf("a job's log line shows its Secrets: %q", got)
	}
}
