package kube

import (
	"context"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/khook/khook/model"
)

// Warning is one warning the API server returned (a Warning header, e.g. a
// deprecated API version or node label), with the object the request was
// about when the caller said (WithObject), or one of khook's own (Warn).
type Warning struct {
	From    model.Warner
	Object  string // "Deployment shop/web"; "" when the request named none
	Message string
}

// Warnings collects the API server's warnings of one step: every request
// whose context carries it (WithWarnings) adds its warnings, each once.
type Warnings struct {
	mu   sync.Mutex
	list []Warning
	seen map[Warning]bool
	to   *Warnings
}

// ForwardTo sends w's warnings, those collected and those to come, to to
// as well (a Helm session's warnings to its step's collector). A nil to
// does nothing.
func (w *Warnings) ForwardTo(to *Warnings) {
	if w == nil || to == nil || to == w {
		return
	}
	w.mu.Lock()
	w.to = to
	list := append([]Warning(nil), w.list...)
	w.mu.Unlock()
	for _, x := range list {
		to.add(x)
	}
}

func (w *Warnings) add(x Warning) {
	w.mu.Lock()
	if to := w.to; to != nil {
		defer to.add(x)
	}
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[Warning]bool{}
	}
	if w.seen[x] {
		return
	}
	w.seen[x] = true
	w.list = append(w.list, x)
}

// List is the warnings collected so far, in the order they came.
func (w *Warnings) List() []Warning {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Warning(nil), w.list...)
}

type (
	warningsKey struct{}
	objectKey   struct{}
)

// WithWarnings returns ctx whose requests add their warnings to w.
func WithWarnings(ctx context.Context, w *Warnings) context.Context {
	return context.WithValue(ctx, warningsKey{}, w)
}

// Warn adds a warning of khook's own about object to the collector ctx
// carries (the step's: plan and apply show it under khook's name, after
// the server's).
func Warn(ctx context.Context, object, message string) {
	if w := WarningsOf(ctx); w != nil {
		w.add(Warning{From: model.WarnerKhook, Object: object, Message: message})
	}
}

// WarningsOf is the collector ctx carries; nil when none.
func WarningsOf(ctx context.Context) *Warnings {
	w, _ := ctx.Value(warningsKey{}).(*Warnings)
	return w
}

// WithObject returns ctx whose requests' warnings are about the object
// named ("Deployment shop/web").
func WithObject(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, objectKey{}, name)
}

// warningHandler hands each warning to the collector of the request's
// context. A warning no collector asks for is dropped: client-go's default
// handler would log it as a raw line, past the step and the redactor.
type warningHandler struct{ fallback *Warnings }

func (h warningHandler) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w := WarningsOf(ctx)
	if w == nil {
		w = h.fallback
	}
	if w == nil {
		return
	}
	obj, _ := ctx.Value(objectKey{}).(string)
	w.add(Warning{From: model.WarnerAPIServer, Object: obj, Message: text})
}

// CollectWarnings sets cfg's warning handler: each warning goes to the
// collector of the request's context, or to fallback (may be nil) for a
// request whose context carries none (a library's own context.Background).
func CollectWarnings(cfg *rest.Config, fallback *Warnings) {
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = warningHandler{fallback: fallback}
}
