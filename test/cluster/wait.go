package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// waitAPIReady polls /readyz with a short backoff: there is nothing to watch
// before the API server serves.
func (c *Cluster) waitAPIReady(ctx context.Context) error {
	rc := rest.CopyConfig(c.RESTConfig)
	rc.Timeout = 2 * time.Second
	client, err := rest.HTTPClientFor(rc)
	if err != nil {
		return fmt.Errorf("khook test cluster: cannot build an HTTP client: %w", err)
	}
	url := rc.Host + "/readyz"
	delay := 50 * time.Millisecond
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return startErr(ctx, ctx.Err(), "the API server to be ready at "+url+" (last answer: "+last+")")
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// waitDefaultServiceAccount waits for the service-account controller to
// create "default" in "default": until then pods there are rejected.
func (c *Cluster) waitDefaultServiceAccount(ctx context.Context) error {
	if err := c.awaitServiceAccount(ctx, "default"); err != nil {
		return startErr(ctx, err, "the default ServiceAccount in namespace default")
	}
	return nil
}

// awaitServiceAccount watches until the "default" ServiceAccount of ns
// exists. The service-account controller creates it shortly after the
// namespace, later after an API server restart (its watches back off).
func (c *Cluster) awaitServiceAccount(ctx context.Context, ns string) error {
	lw := cache.NewListWatchFromClient(c.Client.CoreV1().RESTClient(), "serviceaccounts", ns, fields.OneTermEqualSelector("metadata.name", "default"))
	return until(ctx, lw, &corev1.ServiceAccount{}, func(runtime.Object) bool { return true })
}

// until watches lw until cond holds for an added or modified object.
func until(ctx context.Context, lw cache.ListerWatcher, obj runtime.Object, cond func(runtime.Object) bool) error {
	_, err := watchtools.UntilWithSync(ctx, lw, obj, nil, func(ev watch.Event) (bool, error) {
		if ev.Type != watch.Added && ev.Type != watch.Modified {
			return false, nil
		}
		return cond(ev.Object), nil
	})
	return err
}

// startErr explains why start-up stopped while waiting for what: a component
// that exited (the context's cause), the deadline, or err itself.
func startErr(ctx context.Context, err error, what string) error {
	cause := context.Cause(ctx)
	var exit *exitError
	if errors.As(cause, &exit) {
		return exit
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("khook test cluster: timed out waiting for %s (component logs follow)", what)
	}
	if cause == nil {
		cause = err
	}
	return fmt.Errorf("khook test cluster: stopped waiting for %s: %w", what, cause)
}

// exitError is the cause of a start-up cut short by a component's exit.
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }
