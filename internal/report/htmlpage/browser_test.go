package htmlpage

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser finds a Chromium or Chrome to open pages in, or skips.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no Chromium found: the HTML report is not opened in a browser (apt-get install chromium; .ci/run installs it)")
	return ""
}

// opened is what a page did in the browser: its console messages of
// level warning or worse (errors, exceptions, policy violations), the
// requests that reached the network, and its count of SVG elements.
type opened struct {
	console  []string
	requests []string
	svgs     int
}

// open loads the file in headless Chromium and records what the tab
// reports: requests for anything beyond the file itself (whether or not
// they succeed) and console messages. Every request of the browser,
// loopback included, goes to a proxy that refuses it, so nothing leaves
// the machine whatever the page asks for.
func open(t *testing.T, exe, file string) opened {
	t.Helper()
	var mu sync.Mutex
	var got opened
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no network in this test", http.StatusForbidden)
	})}
	go proxy.Serve(ln)
	defer proxy.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI containers run as root
		chromedp.Flag("disable-dev-shm-usage", true),
		// Quiet the browser's own traffic (updates, sync, metrics): it is
		// not the page's, and the proxy refuses it anyway.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("proxy-server", "http://"+ln.Addr().String()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()

	// Listen sees each event before the reply to any later command, so
	// after the last round trip below every event the load caused is in.
	record := func(list *[]string, line string) {
		mu.Lock()
		*list = append(*list, line)
		mu.Unlock()
	}
	if err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, "file://") {
				record(&got.requests, e.Request.Method+" "+u)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type != runtime.ConsoleAPICalledTypeLog && e.Type != runtime.ConsoleAPICalledTypeInfo && e.Type != runtime.ConsoleAPICalledTypeDebug {
				record(&got.console, fmt.Sprintf("console.%s", e.Type))
			}
		case *runtime.EventExceptionThrown:
			record(&got.console, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelWarning || e.Entry.Level == cdplog.EntryLevelError {
				record(&got.console, fmt.Sprintf("%s %s: %s", e.Entry.Level, e.Entry.Source, e.Entry.Text))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("open %s: %v", file, err)
	}
	n, err := chromedp.Run(tab, chromedp.Evaluate[int]("document.querySelectorAll('svg').length"))
	if err != nil {
		t.Fatal(err)
	}
	// A last round trip, so messages the load caused have arrived.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int]("1")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got.svgs = n
	return got
}

// The HTML report opens in a real browser with no console message above
// info, no network request, and every chart drawn. The same harness sees
// both on a page made to do them, so their absence is measured, not
// assumed.
func TestHTMLReportInBrowser(t *testing.T) {
	exe := browser(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "report.html")
	if err := os.WriteFile(good, []byte(sampleHTML(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte(`<!doctype html><html><body><svg></svg><img src="http://127.0.0.1:9/pixel.png"><script>console.error("boom")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}

	control := open(t, exe, bad)
	if len(control.requests) == 0 || len(control.console) == 0 || control.svgs != 1 {
		t.Fatalf("the harness missed what the control page did: %+v", control)
	}
	t.Logf("control page: requests %q, console %q", control.requests, control.console)

	page := open(t, exe, good)
	if len(page.console) > 0 {
		t.Errorf("console: %q", page.console)
	}
	if len(page.requests) > 0 {
		t.Errorf("network requests: %q", page.requests)
	}
	if page.svgs != 18 {
		t.Errorf("%d SVGs in the page, want 18", page.svgs)
	}
}
