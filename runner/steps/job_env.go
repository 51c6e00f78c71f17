package steps

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	utilptr "k8s.io/utils/ptr"

	"github.com/khook/khook/spec"
)

// podSources turns a job step's env, envFrom and volumes into the
// container's and pod's Kubernetes fields, variables sorted by name.
func podSources(j *spec.Job) (env []corev1.EnvVar, envFrom []corev1.EnvFromSource, vols []corev1.Volume, mounts []corev1.VolumeMount) {
	for name, e := range j.Env {
		v := corev1.EnvVar{Name: name, Value: e.Value}
		if s := e.ValueFrom; s != nil {
			v.Value = ""
			v.ValueFrom = &corev1.EnvVarSource{}
			if r := s.SecretKeyRef; r != nil {
				v.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: optional(r.Optional)}
			}
			if r := s.ConfigMapKeyRef; r != nil {
				v.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: optional(r.Optional)}
			}
		}
		env = append(env, v)
	}
	sort.Slice(env, func(a, b int) bool { return env[a].Name < env[b].Name })
	for _, ef := range j.EnvFrom {
		src := corev1.EnvFromSource{Prefix: ef.Prefix}
		if r := ef.SecretRef; r != nil {
			src.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Optional: optional(r.Optional)}
		}
		if r := ef.ConfigMapRef; r != nil {
			src.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Optional: optional(r.Optional)}
		}
		envFrom = append(envFrom, src)
	}
	for _, vol := range j.Volumes {
		kv := corev1.Volume{Name: vol.Name}
		if s := vol.Secret; s != nil {
			kv.Secret = &corev1.SecretVolumeSource{SecretName: s.SecretName, Optional: optional(s.Optional)}
		}
		if c := vol.ConfigMap; c != nil {
			kv.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: c.Name}, Optional: optional(c.Optional)}
		}
		vols = append(vols, kv)
		mounts = append(mounts, corev1.VolumeMount{Name: vol.Name, MountPath: vol.MountPath, ReadOnly: true})
	}
	return env, envFrom, vols, mounts
}

// optional is nil when false: the API server's default, kept out of the Job.
func optional(b bool) *bool {
	if !b {
		return nil
	}
	return utilptr.To(true)
}
