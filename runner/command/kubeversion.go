package command

import "github.com/khook/khook/runner/kube"

// OfflineKubeVersion is the version offline checks use: the one given, else
// kube.DefaultKubeVersion.
func OfflineKubeVersion(v kube.KubeVersion) kube.KubeVersion {
	if v.Major > 0 {
		return v
	}
	d, _ := kube.ParseKubeVersion(kube.DefaultKubeVersion)
	return d
}
