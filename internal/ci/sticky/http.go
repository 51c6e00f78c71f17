package sticky

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// APIError is a non-2xx answer from a platform API.
type APIError struct {
	Platform string // GitHub, GitLab
	Method   string
	Path     string // without the query string
	Status   int
	Message  string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s API %s %s answered %d: %s", e.Platform, e.Method, e.Path, e.Status, msg)
}

// IsForbidden reports whether err is a 401/403 from the API: a read-only or
// insufficient token, e.g. a pull request from a fork.
func IsForbidden(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusForbidden || ae.Status == http.StatusUnauthorized)
}

// Client is a minimal JSON REST client shared by the GitHub and GitLab threads.
type Client struct {
	Platform string
	BaseURL  string // e.g. https://api.github.com, https://gitlab.com/api/v4
	Header   http.Header
	HTTP     *http.Client
}

// Do sends a JSON request and decodes a JSON answer into out (when non-nil).
// It returns the response headers for pagination.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, body)
	if err != nil {
		return nil, fmt.Errorf("cannot build the %s API request %s %s: %w", c.Platform, method, path, err)
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "khook")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s API %s %s failed: %w", c.Platform, method, pathOnly(path), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the %s API answer to %s %s: %w", c.Platform, method, pathOnly(path), err)
	}
	if resp.StatusCode/100 != 2 {
		var m struct {
			Message any `json:"message"`
			Error   any `json:"error"`
		}
		_ = json.Unmarshal(data, &m)
		msg := fmt.Sprint(first(m.Message, m.Error))
		return resp.Header, &APIError{Platform: c.Platform, Method: method, Path: pathOnly(path), Status: resp.StatusCode, Message: msg}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("the %s API answer to %s %s is not the JSON expected: %w", c.Platform, method, pathOnly(path), err)
		}
	}
	return resp.Header, nil
}

func first(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return ""
}

func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}
