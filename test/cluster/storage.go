package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// StorageClassName is the cluster's default StorageClass. Its provisioner
// (Provisioner) runs inside the process that started the cluster and gives
// each claim a local PersistentVolume: a directory under the cluster's
// directory, bound to the node the scheduler chose for the claim's first pod
// (WaitForFirstConsumer, as kind's and most clouds' default classes bind).
const (
	StorageClassName = "standard"
	Provisioner      = "khook.test/local-path"
)

// storage is the running provisioner.
type storage struct {
	cancel  context.CancelFunc
	done    sync.WaitGroup
	logPath string
	logFile *os.File
}

// startStorage creates the default StorageClass and starts its provisioner.
// The provisioner is the real external-provisioner controller (the one
// out-of-tree provisioners such as local-path and NFS are built on): the PV
// controller, the scheduler's volume binding and the claim's annotations go
// through the same steps as on a real cluster.
func (c *Cluster) startStorage(ctx context.Context) error {
	logPath := filepath.Join(c.Dir, "logs", "provisioner.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("khook test cluster: cannot create the provisioner log: %w", err)
	}
	var mu sync.Mutex
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(logFile, prefix, args)
	}, funcr.Options{Verbosity: 2})

	class := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:          Provisioner,
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(false),
	}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		logFile.Close()
		return fmt.Errorf("khook test cluster: cannot create StorageClass %s: %w", StorageClassName, err)
	}

	runCtx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	p := &localPath{root: filepath.Join(c.Dir, "volumes")}
	pc := controller.NewProvisionController(runCtx, c.Client, Provisioner, p,
		controller.LeaderElection(false), // one provisioner per cluster
		// A claim is retried soon after a conflict, not after the library's
		// 15 s back-off floor, which tests would wait out.
		controller.RateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 5*time.Second)),
	)
	c.storage = &storage{cancel: cancel, logPath: logPath, logFile: logFile}
	c.storage.done.Add(1)
	go func() {
		defer c.storage.done.Done()
		pc.Run(runCtx)
	}()
	return nil
}

// stop stops the provisioner and waits for it.
func (s *storage) stop() {
	s.cancel()
	s.done.Wait()
	s.logFile.Close()
}

// localPath provisions a directory per claim, on the node the scheduler
// picked (or on no node in particular for a class that binds at once).
type localPath struct{ root string }

func (p *localPath) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	path := filepath.Join(p.root, opts.PVName)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("cannot create the volume directory %s: %w", path, err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: ptr.Deref(opts.StorageClass.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			AccessModes:                   opts.PVC.Spec.AccessModes,
			VolumeMode:                    opts.PVC.Spec.VolumeMode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			MountOptions:                  opts.StorageClass.MountOptions,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(corev1.HostPathDirectoryOrCreate)},
			},
		},
	}
	if opts.SelectedNodeName != "" {
		// The volume lives on that node's disk: pods using it must run there.
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{opts.SelectedNodeName},
			}}}},
		}}
	}
	return pv, controller.ProvisioningFinished, nil
}

func (p *localPath) Delete(_ context.Context, pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil {
		return errors.New("not a volume of " + Provisioner)
	}
	path := filepath.Join(p.root, pv.Name)
	if pv.Spec.HostPath.Path != path {
		// Never remove a directory this provisioner did not create.
		return fmt.Errorf("volume %s points at %s, not at %s", pv.Name, pv.Spec.HostPath.Path, path)
	}
	return os.RemoveAll(path)
}
