package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Labels and keys of the record Secret.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "khook"
	// DataKey is the Secret data key that holds the record as JSON.
	DataKey = "record.json"
	// specLabel names the spec that owns the record, for kubectl -l.
	specLabel = "khook.io/spec"
)

// ForeignError says a Secret of the record's name exists that khook did not
// write: khook refuses to touch it.
type ForeignError struct{ Ref Ref }

func (e *ForeignError) Error() string {
	return fmt.Sprintf("secret %s exists and is not managed by khook; choose another state.name (khook only touches a record Secret labelled %s=%s)",
		e.Ref, ManagedByLabel, ManagedByValue)
}

// ConflictError says the record changed under a run: another run wrote it.
type ConflictError struct{ Ref Ref }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the %s was changed by another run while this one was writing it; re-run once the other run is done",
		e.Ref.describe())
}

// Store reads and writes one record Secret with optimistic concurrency: every
// write carries the resourceVersion of the last read or write.
type Store struct {
	Client kubernetes.Interface
	Ref    Ref

	mu              sync.Mutex
	resourceVersion string // "" until the Secret is read or created
	converted       bool   // the last Load read upstream khook's record (upstream.go)
}

// NewStore returns a store for the record at ref.
func NewStore(client kubernetes.Interface, ref Ref) *Store {
	return &Store{Client: client, Ref: ref}
}

// Load reads the record; a missing Secret is (nil, nil).
func (s *Store) Load(ctx context.Context) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, err := s.Client.CoreV1().Secrets(s.Ref.Namespace).Get(ctx, s.Ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.resourceVersion = ""
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %w", s.Ref.describe(), err)
	}
	if !managed(sec) {
		return nil, &ForeignError{Ref: s.Ref}
	}
	s.resourceVersion = sec.ResourceVersion
	raw, ok := sec.Data[DataKey]
	if !ok {
		return nil, fmt.Errorf("the %s has no %s key: it is damaged; delete it (kubectl delete secret -n %s %s) and the next run re-converges every step",
			s.Ref.describe(), DataKey, s.Ref.Namespace, s.Ref.Name)
	}
	if up, ok, err := fromUpstream(raw); ok {
		if err != nil {
			return nil, fmt.Errorf("the %s cannot be read: %v; delete it (kubectl delete secret -n %s %s) and the next run re-converges every step",
				s.Ref.describe(), err, s.Ref.Namespace, s.Ref.Name)
		}
		s.converted = true
		return up, nil
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("the %s cannot be read (%v): delete it (kubectl delete secret -n %s %s) and the next run re-converges every step",
			s.Ref.describe(), err, s.Ref.Namespace, s.Ref.Name)
	}
	if rec.Steps == nil {
		rec.Steps = map[string]StepRecord{}
	}
	return &rec, nil
}

// Save writes the record: creates the Secret when the last Load found none,
// else updates it at the resourceVersion last seen.
func (s *Store) Save(ctx context.Context, rec *Record) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("cannot encode the %s: %w", s.Ref.describe(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.Ref.Name,
			Namespace:       s.Ref.Namespace,
			ResourceVersion: s.resourceVersion,
			Labels:          map[string]string{ManagedByLabel: ManagedByValue, specLabel: labelValue(rec.SpecName)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{DataKey: raw},
	}
	secrets := s.Client.CoreV1().Secrets(s.Ref.Namespace)
	var out *corev1.Secret
	if s.resourceVersion == "" {
		out, err = secrets.Create(ctx, sec, metav1.CreateOptions{FieldManager: ManagedByValue, FieldValidation: metav1.FieldValidationStrict})
		if apierrors.IsAlreadyExists(err) {
			return s.explainExisting(ctx)
		}
		if apierrors.IsNotFound(err) {
			return missingNamespace(s.Ref)
		}
	} else {
		out, err = secrets.Update(ctx, sec, metav1.UpdateOptions{FieldManager: ManagedByValue, FieldValidation: metav1.FieldValidationStrict})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return &ConflictError{Ref: s.Ref}
		}
	}
	if err != nil {
		return fmt.Errorf("cannot write the %s: %w", s.Ref.describe(), err)
	}
	s.resourceVersion = out.ResourceVersion
	return nil
}

// explainExisting is the error for a create that found a Secret already there.
func (s *Store) explainExisting(ctx context.Context) error {
	sec, err := s.Client.CoreV1().Secrets(s.Ref.Namespace).Get(ctx, s.Ref.Name, metav1.GetOptions{})
	if err == nil && !managed(sec) {
		return &ForeignError{Ref: s.Ref}
	}
	return &ConflictError{Ref: s.Ref}
}

// Delete removes the record; an absent record is not an error. A Secret
// khook does not manage is refused.
func (s *Store) Delete(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	secrets := s.Client.CoreV1().Secrets(s.Ref.Namespace)
	sec, err := secrets.Get(ctx, s.Ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read the %s: %w", s.Ref.describe(), err)
	}
	if !managed(sec) {
		return &ForeignError{Ref: s.Ref}
	}
	err = secrets.Delete(ctx, s.Ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sec.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot delete the %s: %w", s.Ref.describe(), err)
	}
	s.resourceVersion = ""
	return nil
}

// IsRecord reports whether sec is a state record: khook's own bookkeeping
// (step names, digests, redacted errors), not values to mask.
func IsRecord(sec *corev1.Secret) bool {
	_, ok := sec.Data[DataKey]
	return managed(sec) && ok
}

func managed(sec *corev1.Secret) bool {
	return sec.Labels[ManagedByLabel] == ManagedByValue
}

// IsForeign reports whether err is a refusal to touch a foreign Secret.
func IsForeign(err error) bool {
	var f *ForeignError
	return errors.As(err, &f)
}

// labelValue fits a name into a label value (63 characters).
func labelValue(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.TrimRight(s, "-._")
}
