package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/khook/khook/model"
	"github.com/khook/khook/words"
)

// operation is the admission operation apply's request for the change
// would be; planned (an offline plan's object, create or update) is
// judged as a create after plannedOp has ruled out what only an update
// decides.
func operation(a model.Action) admission.Operation {
	switch a {
	case model.ActionConfigure, model.ActionReplace:
		return admission.Update
	case model.ActionDelete:
		return admission.Delete
	case model.ActionKeep:
		return ""
	}
	return admission.Create
}

// request is one change as the API server's admission sees it.
type request struct {
	c        Change
	object   string // "Deployment shop/web"
	op       admission.Operation
	obj, old runtime.Object
	desired  *unstructured.Unstructured // the object written, namespace set
	// serverDefaulted: desired has the server's defaults (offline plans).
	serverDefaulted bool
	ns              nsInfo
}

// newRequest builds the admission request of a change: the object with
// the namespace the step applies it to, as the server receives it.
func (set *Set) newRequest(ctx context.Context, c Change, object string) *request {
	op := operation(c.Action)
	if op == "" {
		return nil
	}
	r := &request{c: c, object: object, op: op}
	if op != admission.Delete && c.Desired != nil {
		r.desired = c.Desired
		if c.Namespace != "" && c.Desired.GetNamespace() == "" {
			r.desired = c.Desired.DeepCopy()
			r.desired.SetNamespace(c.Namespace)
		}
		if !set.Live() {
			// A live plan's object is the server's dry run, defaulted.
			r.desired, r.serverDefaulted = withServerDefaults(r.desired)
		}
		r.obj = r.desired
	}
	if c.Live != nil && op != admission.Create {
		r.old = c.Live
	}
	if r.obj == nil && r.old == nil {
		return nil
	}
	r.ns = set.namespace(ctx, c.Namespace)
	return r
}

func (r *request) attributes(op admission.Operation, userInfo *User) *recorder {
	ref := r.desired
	if ref == nil {
		ref = r.old.(*unstructured.Unstructured)
	}
	gvk := ref.GroupVersionKind()
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	obj, old := r.obj, r.old
	if op == admission.Update && old == nil {
		old = obj // an offline update: the live object is unknown
	}
	if op == admission.Create {
		old = nil
	}
	a := admission.NewAttributesRecord(obj, old, gvk, r.c.Namespace, r.c.Name, gvr, "", op, nil, true, userOf(userInfo))
	return &recorder{Attributes: a}
}

// recorder keeps what the dispatcher writes to the audit log: audit
// validation failures and auditAnnotations.
type recorder struct {
	admission.Attributes
	annotations [][2]string
	warnings    []string
}

func (r *recorder) AddAnnotation(key, value string) error {
	r.annotations = append(r.annotations, [2]string{key, value})
	return nil
}

func (r *recorder) AddWarning(_, text string) { r.warnings = append(r.warnings, text) }

// verdicts are one change's admission outcome across the policies.
type verdicts struct {
	violations  []model.Violation
	annotations []model.AuditAnnotation
}

// objectInterfaces are the dispatcher's object conversions, built once:
// an empty scheme, as the objects are unstructured (admission converts
// nothing).
var objectInterfaces = admission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// admit runs every admission policy bound to the change through the API
// server's own dispatcher (failurePolicy, validationActions, params,
// messages as the server applies them), one binding at a time so each
// binding's verdict is its own. What an offline plan cannot know is a
// note naming the policy instead of a verdict.
func (set *Set) admit(ctx context.Context, c Change, object string) verdicts {
	var out verdicts
	if len(set.admission) == 0 {
		return out
	}
	r := set.newRequest(ctx, c, object)
	if r == nil {
		return out
	}
	for _, ap := range set.admission {
		for _, b := range ap.bindings {
			op, why := set.assessable(r, ap, b)
			if why == whyExists && ap.opFree != nil && set.denies(ctx, r, ap.opFree, b, &out) {
				continue // a deny whether the object exists or not
			}
			if why == whyNamespace && r.ns.err != nil {
				set.checkFailed(r, ap, b, "its namespace's labels", r.ns.err, &out)
				continue
			}
			switch why {
			case whyExists:
				why = fmt.Sprintf(whyExists, r.object)
			case whyNamespace:
				why = fmt.Sprintf(whyNamespace, r.c.Namespace)
			}
			if why != "" {
				set.note(ap.policy.Name, why)
				continue
			}
			if op == "" {
				continue
			}
			if ap.refs.user && set.IdentityErr != nil {
				set.checkFailed(r, ap, b, "request.userInfo or authorizer", set.IdentityErr, &out)
				continue
			}
			set.dispatch(ctx, r, op, ap, b, &out)
		}
	}
	return out
}

// dispatch is one binding's admission of the request, recorded as the
// server decides: the denial's own sentence, each Warn as a warn, each
// Audit as an audit, and the auditAnnotations.
func (set *Set) dispatch(ctx context.Context, r *request, op admission.Operation, ap *admissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding, out *verdicts) {
	attr := r.attributes(op, set.UserInfo)
	hook := validating.PolicyHook{Policy: ap.policy, Bindings: []*admissionv1.ValidatingAdmissionPolicyBinding{b},
		ParamInformer: ap.params, ParamScope: ap.paramScope, Evaluator: ap.validator}
	err := validating.NewDispatcher(set.Authorizer, set.matcher).Dispatch(warning.WithWarningRecorder(ctx, attr), attr, objectInterfaces, []validating.PolicyHook{hook})
	name := ap.policy.Name + " (binding " + b.Name + ")"
	add := func(effect, msg string) {
		out.violations = append(out.violations, model.Violation{Policy: name, Effect: effect, Object: r.object, Message: words.OneLine(msg), Source: ap.file})
	}
	if err != nil {
		if why := set.defaulted(r, ap); why != "" {
			set.note(ap.policy.Name, why)
			return
		}
		add(model.EffectDeny, serverSentence(err))
	}
	for _, w := range attr.warnings {
		add(model.EffectWarn, w)
	}
	for _, kv := range attr.annotations {
		if kv[0] == "validation.policy.admission.k8s.io/validation_failure" {
			for _, f := range auditFailures(kv[1]) {
				add(model.EffectAudit, fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' audit: %s", f.Policy, f.Binding, f.Message))
			}
			continue
		}
		out.annotations = append(out.annotations, model.AuditAnnotation{Policy: ap.policy.Name, Object: r.object, Key: kv[0], Value: kv[1]})
	}
}

// checkFailed is a policy reading what the plan could not read (the
// identity: its SelfSubjectReview erred; a namespace's labels: its GET
// erred): an error of the check, so its failurePolicy decides, as the
// server's for an evaluation error: Fail (the default) denies, never
// letting the write through unjudged; Ignore admits.
func (set *Set) checkFailed(r *request, ap *admissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding, reads string, err error, out *verdicts) {
	if fp := ap.policy.Spec.FailurePolicy; fp != nil && *fp == admissionv1.Ignore {
		return
	}
	out.violations = append(out.violations, model.Violation{Policy: ap.policy.Name + " (binding " + b.Name + ")", Effect: model.EffectDeny, Object: r.object, Source: ap.file,
		Message: words.OneLine(fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' cannot be judged, so it refuses (failurePolicy Fail): it reads %s and %v", ap.policy.Name, b.Name, reads, err))})
}

// serverSentence is the API server's own sentence of a denial
// ("ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MSG"),
// the cause the dispatcher put on its status error.
func serverSentence(err error) string {
	var se *k8serrors.StatusError
	if errors.As(err, &se) && se.ErrStatus.Details != nil {
		if cs := se.ErrStatus.Details.Causes; len(cs) > 0 {
			return cs[len(cs)-1].Message
		}
	}
	return err.Error()
}

func auditFailures(value string) []validating.ValidationFailureValue {
	var fs []validating.ValidationFailureValue
	_ = json.Unmarshal([]byte(value), &fs)
	return fs
}

// defaulted says why an offline deny is not assessed: the object is a
// built-in kind khook did not default as the server does (its group has
// no defaulter here, or it does not decode into its type) and the policy
// reads a field the manifest leaves out, which the server's defaulting
// may fill; a field the kind does not have (a policy's branch for another
// kind reads it) is never filled. "" when it is not so (live plans judge
// the dry run's object, defaulted by the server).
func (set *Set) defaulted(r *request, ap *admissionPolicy) string {
	if set.Live() || r.desired == nil || r.serverDefaulted || r.desired.GetKind() == "ConfigMap" {
		return ""
	}
	gvk := r.desired.GroupVersionKind()
	if !scheme.Scheme.Recognizes(gvk) {
		return "" // not a built-in kind: no defaulting of the server's own
	}
	has := func(path []string) bool { return inSchema(gvk, path) }
	if p := ap.refs.absentPath(r.desired.Object, has); p != "" {
		return fmt.Sprintf("%s leaves out %s, which the API server's defaulting may fill before the policy reads it (a live plan judges the defaulted object)", r.object, p)
	}
	return ""
}

// assessable is the operation to judge the request as under the binding,
// "" when the policy does not apply to it, or why an offline plan cannot
// judge it (then no verdict: a note).
func (set *Set) assessable(r *request, ap *admissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) (admission.Operation, string) {
	if !r.ns.known && (ap.refs.namespace || selectsLabels(ap.policy.Spec.MatchConstraints) || selectsLabels(b.Spec.MatchResources)) {
		return "", whyNamespace
	}
	matches := func(op admission.Operation) bool {
		attr := r.attributes(op, nil)
		ok, _, _, err := set.matcher.DefinitionMatches(attr, objectInterfaces, validating.NewValidatingAdmissionPolicyAccessor(ap.policy))
		if err != nil || !ok {
			return err != nil // a matching error is the dispatcher's to report
		}
		ok, err = set.matcher.BindingMatches(attr, objectInterfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(b))
		return ok || err != nil
	}
	op := r.op
	if r.c.Action == model.ActionPlanned {
		create, update := matches(admission.Create), matches(admission.Update)
		switch {
		case update && !create:
			return "", fmt.Sprintf("applies to updates only, and an offline plan cannot tell whether %s exists", r.object)
		case update && (ap.refs.oldObject || ap.refs.operation):
			return "", whyExists
		case !create:
			return "", ""
		}
	} else if !matches(op) {
		return "", ""
	}
	if ap.refs.user && ((set.UserInfo == nil && set.IdentityErr == nil) || set.Authorizer == nil) {
		return "", "reads request.userInfo or authorizer, the identity of the request, which only a live plan knows"
	}
	return op, ""
}

// whyNamespace is the note of a policy that reads the labels of a
// namespace khook does not know (%s: the namespace).
const whyNamespace = "reads the labels of namespace %s, which the spec does not define (a live plan reads them)"

// whyExists is the note of a policy that reads oldObject or the
// operation on a planned object (%s: the object).
const whyExists = "reads the old object or the operation, and an offline plan cannot tell whether %s exists"

// denies records the verdicts of part (a policy's operationFree part) on
// the request as a create when they deny: such a deny holds for an
// update too. False, nothing recorded, when part admits.
func (set *Set) denies(ctx context.Context, r *request, part *admissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding, out *verdicts) bool {
	var v verdicts
	set.dispatch(ctx, r, admission.Create, part, b, &v)
	for _, x := range v.violations {
		if x.Effect == model.EffectDeny {
			out.violations = append(out.violations, v.violations...)
			return true
		}
	}
	return false
}

// selectsLabels: a namespaceSelector that reads labels other than
// kubernetes.io/metadata.name (which khook knows for every namespace).
func selectsLabels(m *admissionv1.MatchResources) bool {
	if m == nil || m.NamespaceSelector == nil {
		return false
	}
	for k := range m.NamespaceSelector.MatchLabels {
		if k != nsNameLabel {
			return true
		}
	}
	for _, e := range m.NamespaceSelector.MatchExpressions {
		if e.Key != nsNameLabel {
			return true
		}
	}
	return false
}

// note records that an offline plan did not judge objects by a policy,
// once per policy and reason.
func (set *Set) note(policy, why string) {
	n := "not assessed offline: " + policy + ": " + why
	if set.Live() {
		n = "not assessed: " + policy + ": " + why
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.noted == nil {
		set.noted = map[string]bool{}
	}
	if !set.noted[n] {
		set.noted[n] = true
		set.notes = append(set.notes, n)
	}
}

// PlanNotes are the notes of the policies for the plan so far: those of
// the policy files and every "not assessed" the checks recorded.
func (set *Set) PlanNotes() []string {
	if set == nil {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return append(append([]string{}, set.Notes...), set.notes...)
}
