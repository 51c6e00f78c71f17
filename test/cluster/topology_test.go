package cluster_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/khook/khook/test/cluster"
)

// The nodes carry the labels and allocatable of real ones.
func TestNodesLookReal(t *testing.T) {
	t.Parallel()
	nodes, err := kube.Client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	if len(nodes.Items) != cluster.DefaultNodes {
		t.Fatalf("%d nodes, want %d", len(nodes.Items), cluster.DefaultNodes)
	}
	zones := map[string]int{}
	for _, n := range nodes.Items {
		for _, l := range []string{corev1.LabelHostname, corev1.LabelOSStable, corev1.LabelArchStable, corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelInstanceTypeStable} {
			if n.Labels[l] == "" {
				t.Errorf("node %s has no label %s", n.Name, l)
			}
		}
		zones[n.Labels[corev1.LabelTopologyZone]]++
		for name, want := range cluster.NodeAllocatable {
			if got := n.Status.Allocatable[name]; got.Cmp(want) != 0 {
				t.Errorf("node %s allocatable %s = %s, want %s", n.Name, name, got.String(), want.String())
			}
		}
	}
	if len(zones) != 2 {
		t.Errorf("nodes per zone %v, want two zones", zones)
	}
}

// Three replicas with required anti-affinity on the hostname land on three
// nodes.
func TestRequiredAntiAffinitySpreads(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	tmpl := podSpec(nil, corev1.RestartPolicyAlways)
	tmpl.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			TopologyKey:   corev1.LabelHostname,
		}},
	}}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "spread"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: tmpl,
		},
	}
	if _, err := kube.Client.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	await(t, kube.Client.AppsV1().RESTClient(), "deployments", ns, "spread", 30*time.Second, deploymentAvailable(3))
	pods, err := kube.Client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	on := map[string]string{}
	for _, p := range pods.Items {
		if prev, ok := on[p.Spec.NodeName]; ok {
			t.Errorf("pods %s and %s both on node %q", prev, p.Name, p.Spec.NodeName)
		}
		on[p.Spec.NodeName] = p.Name
	}
	if len(on) != 3 {
		t.Errorf("pods on %d nodes (%v), want 3", len(on), on)
	}
}

// A StatefulSet's claims from its volumeClaimTemplates are provisioned by
// the default StorageClass on the node of their pod, and it becomes ready.
func TestStatefulSetWithClaimTemplateBecomesReady(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	tmpl := podSpec(nil, corev1.RestartPolicyAlways)
	tmpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: tmpl,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	if _, err := kube.Client.AppsV1().StatefulSets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create statefulset: %v", err)
	}
	await(t, kube.Client.AppsV1().RESTClient(), "statefulsets", ns, "db", 60*time.Second, func(s *appsv1.StatefulSet) bool {
		return s.Status.ObservedGeneration >= s.Generation && s.Status.ReadyReplicas == 2 && s.Status.AvailableReplicas == 2
	})
	for i := range 2 {
		pod, err := kube.Client.CoreV1().Pods(ns).Get(t.Context(), "db-"+string(rune('0'+i)), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pod: %v", err)
		}
		claim, err := kube.Client.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), "data-"+pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get claim: %v", err)
		}
		if claim.Status.Phase != corev1.ClaimBound || ptr.Deref(claim.Spec.StorageClassName, "") != cluster.StorageClassName {
			t.Errorf("claim %s: phase %s, class %q; want Bound, %q", claim.Name, claim.Status.Phase, ptr.Deref(claim.Spec.StorageClassName, ""), cluster.StorageClassName)
			continue
		}
		pv, err := kube.Client.CoreV1().PersistentVolumes().Get(t.Context(), claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get volume: %v", err)
		}
		if na := pv.Spec.NodeAffinity; na == nil || na.Required == nil || na.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != pod.Spec.NodeName {
			t.Errorf("volume %s is not bound to node %s of pod %s: %+v", pv.Name, pod.Spec.NodeName, pod.Name, na)
		}
	}
}

// A class of the same provisioner that binds at once (Immediate) gets a
// volume before any pod, on no node in particular: the scheduler then
// places the pod anywhere.
func TestImmediateClassBindsWithoutAPod(t *testing.T) {
	t.Parallel()
	kube.DumpLogsOnFailure(t)
	ns := kube.Namespace(t)
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ns + "-immediate"},
		Provisioner:       cluster.Provisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if _, err := kube.Client.StorageV1().StorageClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create class: %v", err)
	}
	t.Cleanup(func() {
		_ = kube.Client.StorageV1().StorageClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "now"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class.Name),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := kube.Client.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create claim: %v", err)
	}
	c := await(t, kube.Client.CoreV1().RESTClient(), "persistentvolumeclaims", ns, "now", 30*time.Second, func(c *corev1.PersistentVolumeClaim) bool {
		return c.Status.Phase == corev1.ClaimBound
	})
	pv, err := kube.Client.CoreV1().PersistentVolumes().Get(t.Context(), c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get volume: %v", err)
	}
	if pv.Spec.NodeAffinity != nil {
		t.Errorf("volume %s of an Immediate class is bound to a node: %+v", pv.Name, pv.Spec.NodeAffinity)
	}
}
