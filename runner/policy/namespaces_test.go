package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/khook/khook/model"
)

// clusterNamespaces stands in for a live plan's namespace reads: the
// labels of those that exist, an error for those whose read fails (once:
// the next read finds them), and how often each was read.
type clusterNamespaces struct {
	mu     sync.Mutex
	labels map[string]map[string]any
	failOn map[string]bool
	reads  map[string]int
}

func (c *clusterNamespaces) get(_ context.Context, name string) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[name]++
	if c.failOn[name] {
		c.failOn[name] = false
		return nil, errors.New("connection refused")
	}
	l, ok := c.labels[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": l}}, nil
}

// deployIn is a change creating goodDeploy in namespace ns.
func deployIn(t *testing.T, ns string) Change {
	c := change(model.ActionCreate, obj(t, strings.Replace(goodDeploy, "namespace: shop", "namespace: "+ns, 1)), nil)
	c.Namespace = ns
	return c
}

// The run's one matcher reads each namespace once, keeps what a read
// found or did not find, reads again after an error (which failed the
// policy meanwhile), and sees the labels a step's plan defines after an
// earlier change was judged without them; steps plan in parallel, so
// the checks run concurrently (go test -race).
func TestRunNamespaces(t *testing.T) {
	s, set, err := loadPolicies(t, policyDoc("ns", deployRules+"\n  validations: [{expression: 'false', message: prod}]",
		"  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {env: prod}}}"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterNamespaces{labels: map[string]map[string]any{"shop": {"env": "prod"}, "flaky": {"env": "dev"}},
		failOn: map[string]bool{"flaky": true}, reads: map[string]int{}}
	set.Namespace = cluster.get
	check := func(ns string) []model.Violation {
		return set.Check(context.Background(), s.Steps[0], []Change{deployIn(t, ns)}).Violations
	}
	if vs := check("flaky"); len(vs) != 1 || !strings.Contains(vs[0].Message, "could not read namespace flaky") {
		t.Errorf("a failed read: violations %v, want the deny of a policy that cannot be judged", vs)
	}
	if vs := check("flaky"); len(vs) != 0 {
		t.Errorf("the read after a failed one: violations %v, want none (env: dev)", vs)
	}
	if vs := check("new"); len(vs) != 0 || len(set.PlanNotes()) != 1 {
		t.Errorf("a namespace nobody defines yet: violations %v notes %q, want one note", vs, set.PlanNotes())
	}
	set.DefineNamespace("new", map[string]string{"env": "prod"}) // a step plans Namespace new
	if vs := check("new"); len(vs) != 1 || !strings.Contains(vs[0].Message, "prod") {
		t.Errorf("after a step defined its labels: violations %v, want the deny", vs)
	}

	var wg sync.WaitGroup
	denied := make([]int, 8)
	for i := range denied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set.DefineNamespace(fmt.Sprintf("other-%d", i), map[string]string{"env": "prod"})
			for _, ns := range []string{"shop", "new", fmt.Sprintf("other-%d", i), "absent"} {
				denied[i] += len(check(ns))
			}
		}()
	}
	wg.Wait()
	for i, n := range denied {
		if n != 3 {
			t.Errorf("goroutine %d: %d denies, want 3 (shop, new, other-%d)", i, n, i)
		}
	}
	want := map[string]int{"flaky": 2, "new": 1, "shop": 1, "absent": 1}
	for i := range denied {
		want[fmt.Sprintf("other-%d", i)] = 1
	}
	if fmt.Sprint(cluster.reads) != fmt.Sprint(want) {
		t.Errorf("namespace reads %v, want %v: each once per run, again only after an error", cluster.reads, want)
	}
}
