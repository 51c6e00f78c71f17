package spec

import (
	"fmt"
	"net/url"
	"strings"
)

// ChartRef is a helm chart: reference taken apart by its shape.
type ChartRef struct {
	Kind ChartKind
	// Name is the chart without an inline version: the bare name, the oci://
	// reference without its :tag (a @digest stays), or the local path.
	Name string
	// Version is the inline version: name:1.2.3 or the oci :tag.
	Version string
	// Digest is an oci @sha256:... digest, kept in Name as well.
	Digest string
}

// ParseChart classifies chart: by its shape (there is no discriminator field).
func ParseChart(chart string) ChartRef {
	switch {
	case strings.HasPrefix(chart, "oci://"):
		ref := ChartRef{Kind: ChartOCI, Name: chart}
		lastSlash := strings.LastIndexByte(chart, '/')
		last := chart[lastSlash+1:]
		if i := strings.IndexByte(last, '@'); i >= 0 {
			ref.Digest = last[i+1:]
			last = last[:i]
		}
		if i := strings.IndexByte(last, ':'); i >= 0 && lastSlash >= len("oci://") {
			ref.Version = last[i+1:]
			ref.Name = chart[:lastSlash+1+i]
			if ref.Digest != "" {
				ref.Name += "@" + ref.Digest
			}
		}
		return ref
	case isLocalPath(chart):
		return ChartRef{Kind: ChartLocal, Name: chart}
	}
	name, version, _ := strings.Cut(chart, ":")
	return ChartRef{Kind: ChartRepo, Name: name, Version: version}
}

// ChartKind returns where the step's chart comes from.
func (h *Helm) ChartKind() ChartKind { return ParseChart(h.Chart).Kind }

func isLocalPath(p string) bool {
	return strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") || p == "." || p == ".."
}

// checkURL validates an http(s) URL and its userinfo, which must be a full
// user:password pair when present. It returns a message, or "".
func checkURL(raw string, schemes ...string) (msg, hint string) {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("%q is not a valid URL: %v", raw, unwrapURLError(err)), "URL-encode special characters in credentials with ${VAR|urlquery}"
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return fmt.Sprintf("%q must be an %s URL", raw, strings.Join(schemes, " or ")), ""
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host", raw), ""
	}
	if u.User != nil {
		if pw, set := u.User.Password(); u.User.Username() == "" || !set || pw == "" {
			return "URL credentials must be a full user:password@ pair", "or move them to an auth: block"
		}
	}
	return "", ""
}

// unwrapURLError drops url.Error's repetition of the URL.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// urlHasUserinfo reports whether raw carries user[:password]@ credentials.
func urlHasUserinfo(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.User != nil
}

// urlPassword returns the password of a URL's userinfo, decoded.
func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
