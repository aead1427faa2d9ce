package site

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

// browser finds a Chromium or Chrome to open pages in, or skips, as the
// HTML report's browser test does.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no Chromium found: the site is not opened in a browser (apt-get install chromium; .ci/run installs it)")
	return ""
}

// opened is what a page did in the browser: its console messages of
// level warning or worse, the requests that reached the network, its
// count of SVG elements and of those drawn wider than zero, and how much
// wider than the window its content is (0: no sideways scrolling).
type opened struct {
	console  []string
	requests []string
	svgs     int
	drawn    int
	overflow int
}

// open loads the file in headless Chromium at a window width and writes
// a screenshot of the whole page to shot (none if ""). Every request of
// the browser goes to a proxy that refuses it, so nothing leaves the
// machine whatever the page asks for.
func open(t *testing.T, exe, file string, width, height int64, shot string) opened {
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
	if err := chromedp.Do(tab, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatalf("open %s: %v", file, err)
	}
	n, err := chromedp.Run(tab, chromedp.Evaluate[int]("document.querySelectorAll('svg').length"))
	if err != nil {
		t.Fatal(err)
	}
	// Closed <details> hold charts too: open them all, so each is laid
	// out and measured.
	drawn, err := chromedp.Run(tab, chromedp.Evaluate[int](`(() => {
		document.querySelectorAll('details').forEach(d => d.open = true);
		return [...document.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 0).length;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	over, err := chromedp.Run(tab, chromedp.Evaluate[int]("document.documentElement.scrollWidth - window.innerWidth"))
	if err != nil {
		t.Fatal(err)
	}
	if shot != "" {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A last round trip, so messages the load caused have arrived.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int]("1")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got.svgs, got.drawn, got.overflow = n, drawn, over
	return got
}

// The site opens in a real browser at a desktop's and a phone's width
// with no console message above info, no network request, every chart
// drawn and nothing wider than the window. Screenshots of each page at
// each width go to the test's artifact directory (kept with -artifacts).
// The same harness sees a page made to misbehave, so the absences are
// measured, not assumed.
func TestSiteInBrowser(t *testing.T) {
	exe := browser(t)
	_, s, files, out := build(t)
	bad := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(bad, []byte(`<!doctype html><html><body><div style="width:3000px"><svg></svg></div><img src="http://127.0.0.1:9/pixel.png"><script>console.error("boom")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	control := open(t, exe, bad, 390, 844, "")
	if len(control.requests) == 0 || len(control.console) == 0 || control.svgs != 1 || control.overflow <= 0 {
		t.Fatalf("the harness missed what the control page did: %+v", control)
	}

	pages := []string{"index.html"}
	for _, su := range s.Suites {
		pages = append(pages, su.page)
	}
	shots := t.ArtifactDir()
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		for _, page := range pages {
			shot := filepath.Join(shots, w.name+"-"+strings.ReplaceAll(strings.TrimSuffix(page, ".html"), "/", "-")+".png")
			got := open(t, exe, filepath.Join(out, filepath.FromSlash(page)), w.width, w.height, shot)
			want := strings.Count(string(files[page]), "<svg")
			if len(got.console) > 0 || len(got.requests) > 0 || got.svgs != want || got.drawn != want || got.overflow > 0 {
				t.Errorf("%s at %s width: console %q, requests %q, %d SVGs (%d drawn), want %d; %d px wider than the window",
					page, w.name, got.console, got.requests, got.svgs, got.drawn, want, got.overflow)
			}
			t.Logf("%s at %s width (%d px): %d charts drawn; screenshot %s", page, w.name, w.width, got.drawn, shot)
		}
	}
}
