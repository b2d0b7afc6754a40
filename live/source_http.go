package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/dlroute/dlroute/bundle"
)

// HTTPOptions configure HTTP. The zero value is the documented defaults.
type HTTPOptions struct {
	// Client makes the requests; nil means a client of its own with
	// http.DefaultTransport's settings.
	Client *http.Client
	// Timeout bounds one fetch, body included; 0 means DefaultFetchTimeout.
	Timeout time.Duration
	// MaxSize bounds the body; 0 means bundle.MaxArchiveSize. A larger
	// body is refused after MaxSize bytes, however much the server sends.
	MaxSize int64
	// Header is sent with every request, such as an Authorization.
	Header http.Header
}

// DefaultFetchTimeout bounds one HTTP fetch when HTTPOptions.Timeout is 0.
const DefaultFetchTimeout = 30 * time.Second

// HTTP is a bundle served over HTTP or HTTPS, polled: each fetch sends the
// ETag of the last body as If-None-Match, and a 304 answer costs no
// download and no check. The URL's scheme must be http or https.
func HTTP(rawURL string, opts HTTPOptions) (*HTTPSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &SourceError{Code: CodeRead, Message: fmt.Sprintf("%q is not an http or https URL", rawURL), err: err}
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	opts.Timeout = cmp.Or(opts.Timeout, DefaultFetchTimeout)
	opts.MaxSize = cmp.Or(opts.MaxSize, bundle.MaxArchiveSize)
	return &HTTPSource{url: u.String(), name: u.Redacted(), opts: opts}, nil
}

// HTTPSource is the Source that HTTP returns.
type HTTPSource struct {
	url, name string
	opts      HTTPOptions
	etag      string
}

// String returns the URL, without a password.
func (h *HTTPSource) String() string { return h.name }

// Fetch gets the bundle, or ErrNotModified on a 304.
func (h *HTTPSource) Fetch(ctx context.Context) (*Candidate, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return nil, &SourceError{Code: CodeUnreachable, Message: err.Error(), err: err}
	}
	for k, v := range h.opts.Header {
		req.Header[k] = v
	}
	if h.etag != "" {
		req.Header.Set("If-None-Match", h.etag)
	}
	resp, err := h.opts.Client.Do(req)
	if err != nil {
		return nil, h.netError(ctx, "", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && h.etag != "":
		return nil, ErrNotModified
	case resp.StatusCode != http.StatusOK:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		msg := fmt.Sprintf("%s answered %s", h.name, resp.Status)
		if s := printable(snippet); s != "" {
			msg += ": " + s
		}
		return nil, &SourceError{Code: CodeHTTPStatus, Message: msg}
	case resp.ContentLength > h.opts.MaxSize:
		return nil, &SourceError{Code: CodeTooLong, Message: fmt.Sprintf("%s's body is %d bytes; the limit is %d", h.name, resp.ContentLength, h.opts.MaxSize)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, h.opts.MaxSize+1))
	if err != nil {
		return nil, h.netError(ctx, "reading the body: ", err)
	}
	if int64(len(body)) > h.opts.MaxSize {
		return nil, &SourceError{Code: CodeTooLong, Message: fmt.Sprintf("%s's body is larger than %d bytes", h.name, h.opts.MaxSize)}
	}
	h.etag = resp.Header.Get("ETag")
	return &Candidate{Origin: h.name, Archive: body}, nil
}

// netError classifies a failed request or read.
func (h *HTTPSource) netError(ctx context.Context, what string, err error) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &SourceError{Code: CodeTimeout, Message: fmt.Sprintf("%s%s did not answer within %s", what, h.name, h.opts.Timeout), err: err}
	}
	return &SourceError{Code: CodeUnreachable, Message: what + err.Error(), err: err}
}

// printable is the first line of a server's error body, fit for a log.
func printable(b []byte) string {
	s, _, _ := strings.Cut(strings.ToValidUTF8(string(b), "?"), "\n")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s))
}
