// Package export puts a run's figures where teams' dashboards read them:
// an OpenMetrics exposition (a file, for a textfile collector or an
// artifact) or a Prometheus Pushgateway, in the manner of k6's outputs.
//
// Every figure is the metric catalogue's: one gauge family per metric,
// named benchci_<metric> (latencies in seconds, benchci_<metric>_seconds,
// with a stat label: p50, p99, mean, ...), one series per point and trial,
// labelled with the suite, its variant, the point, the trial, the engine
// and its version, the model and the target URL. SLO verdicts are
// benchci_slo_pass (1 held, 0 failed; inconclusive ones are left out).
// The encoding is the Prometheus libraries' own (expfmt), so names and
// label values are escaped as the format requires whatever the results
// file holds.
package export

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/httpsafe"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/untrusted"
)

// Prefix names every exported family.
const Prefix = "benchci_"

// Families returns the gauge families of the files' figures, sorted by
// name: every catalogue figure each point measured (a figure a point did
// not measure, such as cost without cost inputs, is left out, never
// exported as 0), and the SLO verdicts.
func Families(files []*result.File) []*dto.MetricFamily {
	fams := map[string]*dto.MetricFamily{}
	add := func(name, help, unit string, labels [][2]string, v float64) {
		f := fams[name]
		if f == nil {
			f = &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum()}
			if unit != "" {
				f.Unit = proto.String(unit)
			}
			fams[name] = f
		}
		m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
		for _, l := range labels {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l[0]), Value: proto.String(untrusted.Text(l[1]))})
		}
		f.Metric = append(f.Metric, m)
	}
	for _, f := range files {
		base := fileLabels(f)
		for i := range f.Points {
			p := &f.Points[i]
			labels := append(append([][2]string{}, base...), [2]string{"point", p.Label}, [2]string{"trial", strconv.Itoa(p.Trial)})
			for _, d := range metric.All() {
				switch {
				case d.Kind == metric.Latency:
					s, ok := p.Latency[d.Name]
					if !ok || s.Count == 0 {
						continue
					}
					for _, stat := range metric.Stats {
						v, _ := s.Stat(stat)
						add(Prefix+d.Name+"_seconds", d.Doc, "seconds", append(labels, [2]string{"stat", stat}), v/1000)
					}
				case d.Scope == metric.PerPoint:
					if v, missing := p.Value(metric.K(d.Name, "")); missing == "" {
						add(Prefix+d.Name, d.Doc+" ("+d.Unit+")", "", labels, v)
					}
				}
			}
		}
		if c := f.Capacity; c != nil && c.Rate > 0 {
			d, _ := metric.Lookup(metric.Capacity)
			add(Prefix+d.Name, d.Doc+" ("+d.Unit+")", "", base, c.Rate)
		}
		for _, s := range f.SLOs {
			if s.Inconclusive {
				continue // neither held nor failed: a 0 would read as a failure
			}
			v := 0.0
			if s.Pass {
				v = 1
			}
			add(Prefix+"slo_pass", "1 when the SLO held at the point, 0 when it failed", "", append(append([][2]string{}, base...), [2]string{"slo", s.Name}, [2]string{"point", s.Point}), v)
		}
	}
	out := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// fileLabels are the labels every series of a file carries.
func fileLabels(f *result.File) [][2]string {
	engine, version := "", ""
	if f.Engine != nil {
		engine, version = f.Engine.Name, f.Engine.Version
	}
	return [][2]string{
		{"suite", f.Suite.Name}, {"variant", f.Suite.Variant},
		{"engine", engine}, {"engine_version", version},
		{"model", f.Target.Model}, {"target", f.Target.URL},
	}
}

// WriteOpenMetrics writes the files' figures as OpenMetrics 1.0 text,
// ending in "# EOF", known secrets masked as in every output.
func WriteOpenMetrics(w io.Writer, files []*result.File) error {
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.FmtOpenMetrics_1_0_0)
	for _, f := range Families(files) {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("openmetrics: %w", err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			return fmt.Errorf("openmetrics: %w", err)
		}
	}
	_, err := w.Write(redact.Bytes(b.Bytes()))
	return err
}

// maxGatewayAnswer bounds what is read of a Pushgateway's answer: only
// an error's first lines are shown.
const maxGatewayAnswer = 16 << 10

// Push sends each file's figures to a Pushgateway at gateway (its base
// URL), grouped by job and suite (PUT /metrics/job/<job>/suite/<suite>),
// so that pushing one suite replaces that suite's previous figures and no
// other's. The client's timeouts and ctx bound it; a redirect to another
// host is refused, an error. The URL's password is a secret (redact).
func Push(ctx context.Context, client *http.Client, gateway, job string, files []*result.File) error {
	redact.AddURL(gateway)
	u, err := url.Parse(gateway)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("pushgateway %q: want an http(s) URL", redact.String(gateway))
	}
	// The push carries the URL's credentials, and its success is the
	// gateway's word: neither goes to another host.
	client = httpsafe.Guard(client)
	if job == "" {
		return fmt.Errorf("pushgateway: empty job name")
	}
	bySuite := map[string][]*result.File{}
	var order []string
	for _, f := range files {
		if _, ok := bySuite[f.Suite.Name]; !ok {
			order = append(order, f.Suite.Name)
		}
		bySuite[f.Suite.Name] = append(bySuite[f.Suite.Name], f)
	}
	for _, suite := range order {
		var body bytes.Buffer
		enc := expfmt.NewEncoder(&body, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, fam := range Families(bySuite[suite]) {
			fam.Unit = nil // the text format has no units
			if err := enc.Encode(fam); err != nil {
				return fmt.Errorf("pushgateway: %w", err)
			}
		}
		target := strings.TrimSuffix(u.String(), "/") + "/metrics/job/" + groupValue(job) + "/suite" + groupSuffix(suite)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, bytes.NewReader(redact.Bytes(body.Bytes())))
		if err != nil {
			return fmt.Errorf("pushgateway: %w", err)
		}
		req.Header.Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("pushgateway: push %s: %w", suite, err)
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxGatewayAnswer))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("pushgateway: push %s: %s: %s", suite, resp.Status, untrusted.Text(strings.TrimSpace(string(answer))))
		}
	}
	return nil
}

// groupValue escapes a grouping-key value for the Pushgateway's path.
func groupValue(v string) string { return url.PathEscape(v) }

// groupSuffix is "/<value>", or "@base64/<value>" for a value a path
// cannot hold as it is (a variant's "chat/fp8", or an empty one), as the
// Pushgateway's API defines.
func groupSuffix(v string) string {
	if v == "" {
		return "@base64/=" // the API's spelling of an empty value
	}
	if strings.Contains(v, "/") {
		return "@base64/" + base64.RawURLEncoding.EncodeToString([]byte(v))
	}
	return "/" + url.PathEscape(v)
}
