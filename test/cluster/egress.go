package cluster

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The API server dials Services (admission and conversion webhooks,
// aggregated APIs and their availability checks) at their ClusterIPs in
// 10.96.0.0/16, and nodes (pod logs) at their InternalIP. Nothing listens on
// a ClusterIP here, and traffic to private or public addresses must never
// leave this machine. So kube-apiserver sends every such connection through
// its "cluster" (and "controlplane") egress selection to egressProxy, an HTTP
// CONNECT proxy on a Unix socket that splices loopback destinations (kwok's
// kubelet endpoint at 127.0.0.1) and refuses every other one at once with a
// 502, which the API server reports as a failed call (a webhook with
// failurePolicy Ignore is then skipped, an APIService stays unavailable).
type egressProxy struct {
	l        net.Listener
	socket   string
	tmpDir   string // a short directory for the socket, when Dir's path is too long
	mu       sync.Mutex
	refused  []string
	refusedN int
	wg       sync.WaitGroup
}

// maxRefusals bounds the refused destinations kept for RefusedEgress.
const maxRefusals = 200

// startEgressProxy listens on a Unix socket under dir and writes the
// EgressSelectorConfiguration that points kube-apiserver at it; it returns
// the configuration's path.
func startEgressProxy(dir string) (*egressProxy, string, error) {
	p := &egressProxy{socket: filepath.Join(dir, "egress.sock")}
	// A Unix socket path must fit in 108 bytes.
	if len(p.socket) > 100 {
		tmp, err := os.MkdirTemp("", "khook-egress-")
		if err != nil {
			return nil, "", fmt.Errorf("khook test cluster: cannot create a directory for the egress proxy socket: %w", err)
		}
		p.tmpDir, p.socket = tmp, filepath.Join(tmp, "egress.sock")
	}
	l, err := net.Listen("unix", p.socket)
	if err != nil {
		return nil, "", fmt.Errorf("khook test cluster: cannot listen on the egress proxy socket %s: %w", p.socket, err)
	}
	p.l = l
	cfg := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %[1]q
- name: controlplane
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %[1]q
`, p.socket)
	path := filepath.Join(dir, "egress-selector.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		l.Close()
		return nil, "", fmt.Errorf("khook test cluster: cannot write the egress selector configuration: %w", err)
	}
	p.wg.Add(1)
	go p.serve()
	return p, path, nil
}

func (p *egressProxy) serve() {
	defer p.wg.Done()
	for {
		conn, err := p.l.Accept()
		if err != nil {
			return // closed by stop
		}
		go p.handle(conn)
	}
}

func (p *egressProxy) stop() {
	p.l.Close()
	p.wg.Wait()
	if p.tmpDir != "" {
		_ = os.RemoveAll(p.tmpDir)
	}
}

func (p *egressProxy) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect {
		fmt.Fprintf(conn, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	dest := req.Host
	if reason := refuseReason(dest); reason != "" {
		p.record(dest)
		msg := "khook test cluster egress proxy refused " + dest + ": " + reason
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
		return
	}
	up, err := net.DialTimeout("tcp", dest, 5*time.Second)
	if err != nil {
		msg := "khook test cluster egress proxy cannot reach " + dest + ": " + err.Error()
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(msg), msg)
		return
	}
	defer up.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent after the CONNECT are in br's buffer.
		_, _ = io.Copy(up, br)
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(conn, up)
		if uc, ok := conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// refuseReason says why dest may not be dialled, or "" for a loopback
// address. Names are not resolved: only literal loopback IPs and
// "localhost" pass.
func refuseReason(dest string) string {
	host, _, err := net.SplitHostPort(dest)
	if err != nil {
		return "not a host:port destination"
	}
	if strings.EqualFold(host, "localhost") {
		return ""
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "only loopback IP addresses are dialled; names are not resolved"
	}
	if !ip.IsLoopback() {
		return "only loopback addresses are dialled from the test cluster (nothing listens on ClusterIPs or pod IPs here, and no traffic may leave this machine)"
	}
	return ""
}

func (p *egressProxy) record(dest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusedN++
	p.refused = append(p.refused, dest)
	if len(p.refused) > maxRefusals {
		p.refused = p.refused[len(p.refused)-maxRefusals:]
	}
}

// RefusedEgress returns how many connections the API server tried to open to
// a non-loopback address (and the proxy refused), and the most recent
// destinations (host:port), oldest first. A cluster reached through Connect
// has no proxy: ok is false.
func (c *Cluster) RefusedEgress() (count int, dests []string, ok bool) {
	if c.egress == nil {
		return 0, nil, false
	}
	c.egress.mu.Lock()
	defer c.egress.mu.Unlock()
	return c.egress.refusedN, append([]string(nil), c.egress.refused...), true
}
