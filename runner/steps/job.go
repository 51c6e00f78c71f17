package steps

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilptr "k8s.io/utils/ptr"

	"github.com/khook/khook/model"
	"github.com/khook/khook/runner"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/runner/kube/wait"
	"github.com/khook/khook/spec"
)

// Labels on every Job khook runs (and its pods). A Job without the
// managed-by label is not khook's: khook never deletes it.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "khook"
	StepLabel      = "khook.io/step"
)

// LogTailLines is how many of a failed pod's last log lines the step error carries.
const LogTailLines = 20

// jobMapping is batch/v1 jobs; a built-in type needs no discovery.
var jobMapping = &meta.RESTMapping{
	Resource:         batchv1.SchemeGroupVersion.WithResource("jobs"),
	GroupVersionKind: batchv1.SchemeGroupVersion.WithKind("Job"),
	Scope:            meta.RESTScopeNamespace,
}

var podMapping = &meta.RESTMapping{
	Resource:         corev1.SchemeGroupVersion.WithResource("pods"),
	GroupVersionKind: corev1.SchemeGroupVersion.WithKind("Pod"),
	Scope:            meta.RESTScopeNamespace,
}

// JobExecutor runs a container to completion as a batch/v1 Job named after the step.
// Each run replaces the previous run's Job (delete, wait until gone, create),
// unless skipIf: succeeded finds that Job already complete.
type JobExecutor struct{ Env }

// NewJobExecutor returns the job executor.
func NewJobExecutor(env Env) *JobExecutor { return &JobExecutor{env} }

// Execute runs the step's Job and waits for it to complete or fail.
func (x *JobExecutor) Execute(ctx context.Context, st *spec.Step) (runner.Outcome, error) {
	if st.Job == nil {
		return runner.Outcome{}, wrongStep(st, spec.TypeJob)
	}
	out, err := x.run(ctx, st, kube.DryRunNone)
	if out.Writes > 0 || err != nil {
		kube.InvalidateLive(ctx) // a job may write anything: later reads list again
	}
	for i, l := range out.LogTail {
		out.LogTail[i] = x.Redactor.String(l)
	}
	return x.finish(out, err)
}

// run is the job step's one path, for Execute and (dry: up to the Job's
// creation as a server-side dry run, no wait) for Plan.
func (x *JobExecutor) run(ctx context.Context, st *spec.Step, dry kube.DryRunStrategy) (runner.Outcome, error) {
	var out runner.Outcome
	c, j := x.Clients, st.Job
	ns := spec.NamespaceOrDefault(j.Namespace)
	ref := fmt.Sprintf("job/%s in %s", st.Name, ns)
	jobs := c.Typed.BatchV1().Jobs(ns)

	if j.CreateNamespace {
		created, wrote, err := createNamespace(ctx, c, ns, dry)
		if wrote {
			out.Writes++
		}
		if created {
			out.Changes = append(out.Changes, namespaceCreated(ns))
		}
		if err != nil {
			return out, err
		}
		if created && dry.IsDryRun() {
			return out, nil // the Job is created in the namespace the step creates
		}
	}

	old, err := jobs.Get(ctx, st.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return out, fmt.Errorf("cannot read %s: %w", ref, c.Explain(err))
	default:
		if old.Labels[ManagedByLabel] != ManagedByValue {
			return out, fmt.Errorf("%s exists and is not managed by khook (no label %s=%s); rename the step or delete the Job",
				ref, ManagedByLabel, ManagedByValue)
		}
		if j.SkipIf == "succeeded" && JobSucceeded(ctx, c, old) {
			out.Skipped = true
			out.SkipReason = ref + " already completed successfully (skipIf: succeeded)"
			return out, nil
		}
		out.Writes++
		if dry.IsDryRun() {
			return out, nil // a dry-run create would meet the Job not yet deleted
		}
		if err := x.deleteAndWait(ctx, old, ref); err != nil {
			return out, err
		}
	}

	job := buildJob(st, ns)
	out.Writes++
	opts := metav1.CreateOptions{FieldManager: kube.FieldManager, FieldValidation: kube.FieldValidation, DryRun: dry.Options()}
	created, err := jobs.Create(ctx, job, opts)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// A job always runs: once an earlier step creates the
			// namespace, the plan says run.
			return out, &runner.Pending{Namespace: ns, Then: model.ActionRun, Err: fmt.Errorf("cannot create %s: %w (set createNamespace: true to create the namespace)", ref, c.Explain(err))}
		}
		if r := kube.Refused(ref, err); r != nil && !kube.IsUnreachable(err) {
			return out, r
		}
		return out, fmt.Errorf("cannot create %s: %w", ref, c.Explain(err))
	}
	if dry.IsDryRun() {
		return out, nil
	}
	out.Changes = append(out.Changes, model.Change{Action: model.DidRun, Kind: "Job", Namespace: ns, Name: st.Name})
	return x.await(ctx, out, created, ref)
}

// await waits for the Job created to finish: its outcome, with the pod's
// log tail and a diagnosis when it failed or ran out of time.
func (x *JobExecutor) await(ctx context.Context, out runner.Outcome, created *batchv1.Job, ref string) (runner.Outcome, error) {
	start := time.Now()
	final, err := x.waitFinished(ctx, created, ref)
	jobRef := []wait.ObjectRef{{GVK: jobMapping.GroupVersionKind, Namespace: created.Namespace, Name: created.Name}}
	if err != nil {
		x.diagnoseJob(ctx, start, &out, err, jobRef)
		if errors.Is(err, context.DeadlineExceeded) {
			// A run out of time still shows what the pod printed so far;
			// a cancelled run must stop at once instead.
			logCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			out.LogTail, _ = x.logTail(logCtx, created)
		}
		return out, withLogs(err, out.LogTail)
	}
	// final is nil when the pod's success decided: nothing failed.
	if failed := jobCondition(final, batchv1.JobFailed); failed != nil {
		lines, logErr := x.logTail(ctx, final)
		out.LogTail = lines
		msg := fmt.Sprintf("%s failed: %s", ref, failed.Reason)
		if failed.Message != "" {
			msg += " (" + failed.Message + ")"
		}
		if logErr != nil {
			msg += "; " + logErr.Error()
		}
		err := errors.New(msg)
		x.diagnoseJob(ctx, start, &out, err, jobRef)
		return out, withLogs(err, lines)
	}
	out.Detail = fmt.Sprintf("%s completed in %s", ref, roundDuration(time.Since(start)))
	return out, nil
}

// buildJob is the Job for one run of the step.
func buildJob(st *spec.Step, ns string) *batchv1.Job {
	j := st.Job
	labels := map[string]string{ManagedByLabel: ManagedByValue, StepLabel: st.Name}
	env, envFrom, vols, mounts := podSources(j)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: st.Name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			// Every khook attempt is a fresh Job; retries belong to the step.
			BackoffLimit: utilptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: j.ServiceAccount,
					Volumes:            vols,
					Containers: []corev1.Container{{
						Name:         "job",
						Image:        j.Image,
						Command:      j.Command,
						Args:         j.Args,
						Env:          env,
						EnvFrom:      envFrom,
						VolumeMounts: mounts,
					}},
				},
			},
		},
	}
	if t := st.Timeout.D(); t > 0 {
		job.Spec.ActiveDeadlineSeconds = utilptr.To(int64(math.Ceil(t.Seconds())))
	}
	return job
}

// deleteAndWait deletes the previous run's Job and its pods and returns once
// the Job is gone, so the new one can take its name.
func (x *JobExecutor) deleteAndWait(ctx context.Context, old *batchv1.Job, ref string) error {
	c := x.Clients
	policy := metav1.DeletePropagationBackground
	err := c.Typed.BatchV1().Jobs(old.Namespace).Delete(ctx, old.Name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &old.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("cannot delete the previous run's %s: %w", ref, c.Explain(err))
	}
	target := wait.Target{Mapping: jobMapping, Namespace: old.Namespace, Name: old.Name}
	return wait.For(ctx, c, target, "the previous run's Job to be deleted", func(objs []*unstructured.Unstructured) (bool, string, error) {
		for _, o := range objs {
			if o.GetUID() == old.UID {
				return false, ref + " is still being deleted", nil
			}
		}
		return true, "", nil
	})
}

// waitFinished waits until the Job has the Complete or Failed condition, or
// until its pod has succeeded, whichever is seen first. With backoffLimit 0
// and one completion, a Succeeded pod already decides the outcome; the Job
// controller records it only after its one-second batching period, which a
// bootstrap of many job steps would otherwise pay once per step. It returns
// the finished Job, or nil when the pod's success decided.
func (x *JobExecutor) waitFinished(ctx context.Context, created *batchv1.Job, ref string) (*batchv1.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var final *batchv1.Job
	jobDone := make(chan error, 1)
	go func() {
		target := wait.Target{Mapping: jobMapping, Namespace: created.Namespace, Name: created.Name}
		jobDone <- wait.For(ctx, x.Clients, target, "the Job to finish", func(objs []*unstructured.Unstructured) (bool, string, error) {
			for _, o := range objs {
				if o.GetUID() != created.UID {
					continue
				}
				var j batchv1.Job
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), &j); err != nil {
					return false, "", fmt.Errorf("cannot read %s: %v", ref, err)
				}
				if jobCondition(&j, batchv1.JobComplete) != nil || jobCondition(&j, batchv1.JobFailed) != nil {
					final = &j
					return true, "", nil
				}
				return false, fmt.Sprintf("%s has %d active, %d succeeded, %d failed pods", ref, j.Status.Active, j.Status.Succeeded, j.Status.Failed), nil
			}
			return false, "", fmt.Errorf("%s was deleted by someone else while khook waited for it", ref)
		})
	}()
	podDone := make(chan error, 1)
	go func() {
		pods := wait.Target{Mapping: podMapping, Namespace: created.Namespace,
			LabelSelector: batchv1.ControllerUidLabel + "=" + string(created.UID)}
		podDone <- wait.For(ctx, x.Clients, pods, "the Job's pod to succeed", func(objs []*unstructured.Unstructured) (bool, string, error) {
			for _, o := range objs {
				if phase, _, _ := unstructured.NestedString(o.Object, "status", "phase"); phase == string(corev1.PodSucceeded) {
					return true, "", nil
				}
			}
			return false, "", nil
		})
	}()
	select {
	case err := <-jobDone:
		return final, err
	case err := <-podDone:
		if err == nil {
			return nil, nil
		}
		// The pods could not be watched (RBAC, say): the Job still decides.
		return final, <-jobDone
	}
}

// JobSucceeded reports whether a Job completed successfully: its Complete
// condition, or, before the Job controller has recorded it, its pod's
// Succeeded phase (the same rule waitFinished uses to end a step). skipIf:
// succeeded and plan both decide by it.
func JobSucceeded(ctx context.Context, c *kube.Clients, job *batchv1.Job) bool {
	if jobCondition(job, batchv1.JobComplete) != nil {
		return true
	}
	if jobCondition(job, batchv1.JobFailed) != nil {
		return false
	}
	pods, err := c.Typed.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: batchv1.ControllerUidLabel + "=" + string(job.UID),
	})
	if err != nil {
		return false // cannot tell: run the job again rather than skip it wrongly
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded {
			return true
		}
	}
	return false
}

// logTail reads the last log lines of the Job's pods (normally one: the
// backoff limit is 0), newest pod last.
func (x *JobExecutor) logTail(ctx context.Context, job *batchv1.Job) ([]string, error) {
	pods, err := x.Clients.Typed.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: batchv1.ControllerUidLabel + "=" + string(job.UID),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list the pods of job/%s: %v", job.Name, x.Clients.Explain(err))
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("job/%s has no pods to read logs from", job.Name)
	}
	sort.Slice(pods.Items, func(a, b int) bool {
		return pods.Items[a].CreationTimestamp.Before(&pods.Items[b].CreationTimestamp)
	})
	var lines []string
	var errs []string
	for _, pod := range pods.Items {
		x.readPodSecrets(ctx, &pod)
		raw, err := x.Clients.Typed.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
			Container: "job",
			TailLines: utilptr.To(int64(LogTailLines)),
		}).DoRaw(ctx)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cannot read the logs of pod %s: %v", pod.Name, x.Clients.Explain(err)))
			continue
		}
		if len(pods.Items) > 1 {
			lines = append(lines, "[pod "+pod.Name+"]")
		}
		lines = append(lines, strings.Split(strings.TrimRight(string(raw), "\n"), "\n")...)
	}
	if len(errs) > 0 {
		return lines, errors.New(strings.Join(errs, "; "))
	}
	return lines, nil
}

// withLogs appends the log tail to an error's text.
func withLogs(err error, lines []string) error {
	if len(lines) == 0 {
		return err
	}
	return fmt.Errorf("%w; last log lines:\n  %s", err, strings.Join(lines, "\n  "))
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	if j == nil {
		return nil
	}
	for i, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// Plan is Execute's path up to the Job's creation, dry-run: run (a job
// runs on every apply), or skip when skipIf: succeeded holds.
func (x *JobExecutor) Plan(ctx context.Context, st *spec.Step, _ runner.PlanInput) (runner.Prediction, error) {
	var p runner.Prediction
	if st.Job == nil {
		return p, wrongStep(st, spec.TypeJob)
	}
	out, err := x.run(ctx, st, kube.DryRunServer)
	if err != nil {
		return p, err
	}
	if out.Skipped {
		p.Action, p.Reason = model.ActionSkip, out.SkipReason
		return p, nil
	}
	for _, c := range out.Changes { // createNamespace's, as apply reports it
		p.Objects = append(p.Objects, namespacePlanned(c.Name))
	}
	ns := spec.NamespaceOrDefault(st.Job.Namespace)
	p.Action = model.ActionRun
	p.Reason = fmt.Sprintf("job %s/%s runs on every apply (the previous run's Job is replaced); not counted as a change", ns, st.Name)
	return p, nil
}
