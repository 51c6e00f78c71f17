package steps

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readPodSecrets reads the Secrets a pod's spec references (env
// secretKeyRef, envFrom, secret and projected volumes), as the pod in the
// cluster has it (admission may have added some), before its log is read:
// the clients' tap registers their values, so a job that echoes its own
// password shows *** in the log khook prints. A Secret that cannot be read
// (forbidden, gone) is passed over: the log is still shown.
func (x *JobExecutor) readPodSecrets(ctx context.Context, pod *corev1.Pod) {
	for _, name := range podSecretNames(&pod.Spec) {
		_, _ = x.Clients.Typed.CoreV1().Secrets(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
}

// podSecretNames lists the Secrets a pod spec references, sorted, once each.
func podSecretNames(ps *corev1.PodSpec) []string {
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" {
			seen[n] = true
		}
	}
	for _, cs := range [][]corev1.Container{ps.InitContainers, ps.Containers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					add(e.ValueFrom.SecretKeyRef.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil {
					add(e.SecretRef.Name)
				}
			}
		}
	}
	for _, v := range ps.Volumes {
		if v.Secret != nil {
			add(v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					add(src.Secret.Name)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
