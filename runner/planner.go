package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// Planner is an executor's second entry point: Plan runs Execute's own path
// with a server-side dry run for every write and no waits, and says what
// Execute would do. It writes nothing. An error is what Execute would fail
// with (its sentence); the plan decides, in one place (runner/plan), what
// such an error makes of the step, and redacts it with the prediction.
type Planner interface {
	Plan(ctx context.Context, step *spec.Step, in PlanInput) (Prediction, error)
}

// PlanInput is what the plan hands an executor beyond the step.
type PlanInput struct {
	// APIVersions are the API versions CRDs of earlier steps serve by the
	// time the step runs (helm's capabilities).
	APIVersions []string
	// Lookup wraps the REST config a chart's templates read the cluster
	// with (the lookup-secrets policy); nil: as apply.
	Lookup func(*rest.Config) *rest.Config
	// Produced reports whether an earlier step of the run registers a kind
	// (Kind.group, lower-case): a chart that uses it cannot be rendered yet.
	Produced func(kind, group string) bool
	// CreatesNamespace reports whether a step of the spec creates the
	// namespace: a chart that writes into a missing one no step creates
	// would fail.
	CreatesNamespace func(ns string) bool
	// CRDs are the CRDs the steps this one needs apply (local manifests):
	// a chart's custom resources are checked against them where they change
	// what the cluster holds, not against the CRDs live.
	CRDs []*unstructured.Unstructured
}

// Prediction is what an executor's Plan says Execute would do.
type Prediction struct {
	Action model.Action
	Reason string
	// Objects are the objects the step would touch, with what was sent
	// (Desired, the server's dry-run answer where there is one) and what was
	// read (Live): the plan diffs and digests them.
	Objects []PlannedObject
	// DiffNote says why the step has no diff ("" when Objects make it).
	DiffNote string
	// Digest is what only the executor knows to digest: a patch body when
	// only the server can apply it (Kind "patch"). Nil: none.
	Digest *PlanDigest
	// Release is what a helm step is predicted against (nil: not known).
	Release *PlannedRelease
}

// PlannedRelease is a helm step's release as predicted: the last
// revision, and the chart (its content) and values apply would install
// (nil: not loaded).
type PlannedRelease struct {
	Revision  int
	Chart     any
	Values    map[string]any
	ChartName string
	// ChartDigest is what the chart's bytes are pinned by (an OCI manifest
	// digest, a .tgz's sha256; "" for a chart directory).
	ChartDigest string
	// ChartVersion is the chart's name@version.
	ChartVersion string
}

// PlannedObject is one object of a prediction.
type PlannedObject struct {
	Action                model.Action
	Kind, Namespace, Name string
	// Reason says why, where the object's action needs it: what a delete
	// takes with it, or why it is kept.
	Reason string
	// With is what a deleted CRD takes with it ("its 2 Widget objects in
	// 1 namespace"): the plan's verdict and annotations say it.
	With string
	// Desired is the object as the server answered the dry run (or as
	// sent, when it could not be dry-run: its namespace or kind comes with
	// the same step); nil for a delete.
	Desired *unstructured.Unstructured
	// Live is the object as read; nil when it does not exist.
	Live *unstructured.Unstructured
	// LiveDigest, when set, is what to digest instead of Live (a release).
	LiveDigest []byte
}

// PlanDigest is raw material for the plan's digests.
type PlanDigest struct {
	Kind string
	Data []byte
}

// Pending is an error saying a step needs what the cluster does not have
// yet: a namespace, a kind or an object. The plan says which earlier step
// provides it (the step is then unknown), or, when none does, that apply
// fails with Err.
type Pending struct {
	// Namespace is a namespace that does not exist.
	Namespace string
	// Kind and Group are a kind the cluster does not serve.
	Kind, Group string
	// Object is the key of an object that does not exist (lower-case kind,
	// namespace, name) and What names it for messages.
	Object, What string
	// Fallback, when set, is the step's action when nothing produces what
	// is missing (rollout status: wait), with Err's text as the reason;
	// empty: the step fails with Err, or is unknown for a kind or object.
	Fallback model.Action
	// Then, when set, is the step's action once an earlier step provides
	// what is missing (a job always runs): the plan says it, naming that
	// step; empty: the step is unknown until then.
	Then model.Action
	Err  error
}

func (p *Pending) Error() string { return p.Err.Error() }
func (p *Pending) Unwrap() error { return p.Err }

// AsPending finds a Pending in err's chain.
func AsPending(err error) (*Pending, bool) {
	var p *Pending
	ok := errors.As(err, &p)
	return p, ok
}

// PendingNamespace wraps err (apply's own sentence) as a missing namespace.
func PendingNamespace(ns string, err error) error {
	return &Pending{Namespace: ns, Err: err}
}

// PendingKind wraps err as a kind the cluster does not serve yet.
func PendingKind(kind, group string, err error) error {
	if err == nil {
		err = fmt.Errorf("kind %s is not served", Qualified(kind, group))
	}
	return &Pending{Kind: kind, Group: group, Err: err}
}

// Qualified is kind.group ("Widget.example.com"), or kind for the core group.
func Qualified(kind, group string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// ObjectKey names an object by lower-case kind, namespace and name: how a
// plan finds the step that applies an object a step needs (Pending.Object).
func ObjectKey(kind, ns, name string) string { return strings.ToLower(kind) + "/" + ns + "/" + name }
