package kube

import (
	"github.com/khook/khook/runner/kube/apischema"
	"github.com/khook/khook/runner/kube/manifest"
	"strconv"

	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/khook/khook/spec"
)

// FieldValidation is what every khook write asks of the API server: an
// unknown or duplicate field fails the request (as kubectl does by
// default) instead of being dropped silently. Dry runs ask the same, so a
// plan fails where the apply would.
const FieldValidation = metav1.FieldValidationStrict

// FieldError is a write the API server refused for fields it does not
// accept: unknown or duplicate fields (strict field validation), or fields
// the schema does not declare (server-side apply).
type FieldError struct {
	Object  string // "Deployment web/api"
	Message string // the API server's sentence
	Fields  []Field
}

// Field is one field the API server named, and where it is written (zero
// when khook did not load the manifest from a file or inline block).
type Field struct {
	Path string
	Pos  spec.Pos
}

func (e *FieldError) Error() string {
	var at []string
	for _, f := range e.Fields {
		if !f.Pos.IsZero() {
			at = append(at, f.Path+" is written at "+f.Pos.String())
		}
	}
	msg := fmt.Sprintf("the API server rejected %s: %s", e.Object, e.Message)
	if len(at) > 0 {
		msg += " (" + strings.Join(at, "; ") + ")"
	}
	return msg + "; fix or remove the field (khook validates every write strictly, like kubectl)"
}

// Pos is where the first named field is written, for annotations.
func (e *FieldError) Pos() spec.Pos {
	for _, f := range e.Fields {
		if !f.Pos.IsZero() {
			return f.Pos
		}
	}
	return spec.Pos{}
}

var (
	// strict decoding: `unknown field "spec.x"`, `duplicate field "spec.y"`.
	strictField = regexp.MustCompile(`(?:unknown|duplicate) field "((?:[^"\\]|\\.)*)"`)
	// server-side apply: `.spec.x: field not declared in schema`.
	undeclaredField = regexp.MustCompile(`(\.[^\s:]*(?:\[[^\]]*\][^\s:]*)*): field not declared in schema`)
)

// fieldError recognises the API server's refusal of fields and says where
// they are written in src (the object as loaded); nil for other errors.
func fieldError(err error, src *unstructured.Unstructured, name string) *FieldError {
	if err == nil || !(apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsInternalError(err)) {
		return nil
	}
	msg := APIMessage(err)
	var paths []string
	for _, m := range strictField.FindAllStringSubmatch(msg, -1) {
		p := m[1]
		if u, err := strconv.Unquote(`"` + p + `"`); err == nil {
			p = u
		}
		paths = append(paths, p)
	}
	for _, m := range undeclaredField.FindAllStringSubmatch(msg, -1) {
		paths = append(paths, m[1])
	}
	if len(paths) == 0 {
		return nil
	}
	fe := &FieldError{Object: name, Message: msg}
	for _, p := range paths {
		fe.Fields = append(fe.Fields, Field{Path: strings.TrimPrefix(p, "."), Pos: manifest.SourcePos(src, p)})
	}
	return fe
}

// IsFieldError reports whether err is the API server's refusal of fields.
func IsFieldError(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe)
}

// AsFieldError is err as the API server's refusal of fields of obj (a
// FieldError naming where each field is written), or nil when err is not
// one.
func AsFieldError(err error, obj *unstructured.Unstructured, name string) *FieldError {
	return fieldError(err, obj, name)
}

// SchemaFieldError is problems (apischema's Validate) as the refusal of fields apply
// would meet: each field named where it is written in obj's source.
func SchemaFieldError(obj *unstructured.Unstructured, name string, problems []apischema.SchemaProblem) *FieldError {
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	fe := &FieldError{Object: name}
	for i, p := range problems {
		msgs[i] = p.Message
		fe.Fields = append(fe.Fields, Field{Path: p.Path, Pos: manifest.SourcePos(obj, p.Path)})
	}
	fe.Message = strings.Join(msgs, "; ")
	return fe
}
