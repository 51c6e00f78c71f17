package steps

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/khook/khook/redact"
	"github.com/khook/khook/runner/kube"
	"github.com/khook/khook/spec"
)

// watchSignal closes the current channel when a watch request goes out, so
// the benchmark flips the condition only once the wait is watching.
type watchSignal struct{ ch atomic.Pointer[chan struct{}] }

func (w *watchSignal) arm() <-chan struct{} {
	ch := make(chan struct{})
	w.ch.Store(&ch)
	return ch
}

func (w *watchSignal) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	var mu sync.Mutex
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("watch") == "true" {
				mu.Lock()
				if p := w.ch.Swap(nil); p != nil {
					close(*p)
				}
				mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// BenchmarkWaitLatency measures issue #4's acceptance (b): the time from a
// watched condition becoming true to the wait step returning. Each
// iteration runs a wait step (jsonpath on a ConfigMap), flips the ConfigMap
// once the step's watch is open, and times from just before the PATCH is
// sent ("sent", an upper bound) and from its response ("acked") to the
// step's return. Run with -benchtime=20x for the median over 20 runs.
func BenchmarkWaitLatency(b *testing.B) {
	ns := testCluster.Namespace(b)
	var sig watchSignal
	c, err := kube.NewClientsForConfig(sig.wrap(testCluster.RESTConfig))
	if err != nil {
		b.Fatal(err)
	}
	x := NewWaitExecutor(NewEnv(c, b.TempDir(), redact.New()))
	createConfigMap(b, ns, "flag", map[string]string{"v": "start"})
	cms := testCluster.Client.CoreV1().ConfigMaps(ns)

	var fromSent, fromAck []time.Duration
	for i := 0; b.Loop(); i++ {
		want := strconv.Itoa(i)
		st := &spec.Step{Name: "w", Wait: &spec.Wait{For: "jsonpath={.data.v}=" + want, On: "configmap/flag", Namespace: ns}}
		watching := sig.arm()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		returned := make(chan time.Time, 1)
		errc := make(chan error, 1)
		go func() {
			_, err := x.Execute(ctx, st)
			returned <- time.Now()
			errc <- err
		}()
		select {
		case <-watching:
		case <-ctx.Done():
			b.Fatal("the wait step never opened its watch")
		}
		sent := time.Now()
		_, err := cms.Patch(context.Background(), "flag", types.MergePatchType, []byte(`{"data":{"v":"`+want+`"}}`), metav1.PatchOptions{})
		acked := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		end := <-returned
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		cancel()
		fromSent = append(fromSent, end.Sub(sent))
		fromAck = append(fromAck, max(0, end.Sub(acked)))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(median(fromSent)), "ms-median-from-patch-sent")
	b.ReportMetric(ms(median(fromAck)), "ms-median-from-patch-acked")
	b.ReportMetric(ms(sortedDurations(fromSent)[len(fromSent)-1]), "ms-max-from-patch-sent")
	b.Logf("runs %d; latency from patch sent (ms): %s", len(fromSent), fmtDurations(fromSent))
}

func sortedDurations(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func median(ds []time.Duration) time.Duration {
	s := sortedDurations(ds)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtDurations(ds []time.Duration) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.1f", float64(d.Microseconds())/1000)
	}
	return out
}
