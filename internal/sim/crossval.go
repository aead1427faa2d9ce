package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Of the model's constants, the published rows set one per engine, the
// step overhead (Engine.StepOverhead, vLLM's from its latency rows), and
// one per card whose batched rows want it (GPUCard.SeqLayerUs: MI300X's).
// A card with a constant of its own runs its own stack (ROCm), so its rows
// do not fit the engines' step overheads, which its constant would
// otherwise trade against. The kernel shares come from kernels timed on a
// GPU (sim/measured) and the cards' other figures from datasheets; no row
// set them, so a cross-validation has nothing of theirs to refit. The
// model's structure was chosen looking at the rows marked tuned-on
// (Reference.New is false; MI300X's among them, since the form of its
// constant was chosen on them) and cannot be held out: the other rows
// added with roofline 2 are its held-out test.

// overheadRange bounds the fitted step overhead: from a CUDA graph's
// replay to a slow Python scheduler's step.
var overheadRange = [2]time.Duration{50 * time.Microsecond, 20 * time.Millisecond}

// Fold is one source held out: the step overhead its engine was given,
// fitted on the other sources' rows, and its rows' figures so predicted.
type Fold struct {
	Source string
	Engine string
	// Overhead is the step overhead fitted without the source;
	// InSample the one fitted on every row.
	Overhead, InSample time.Duration
	// Pooled marks a fold whose engine no other source ran: its overhead
	// was fitted on every engine's rows of the other sources.
	Pooled bool
	// SeqLayer is the SeqLayerUs of each fitted card the source's rows
	// ran on, fitted on the other sources' rows of it (0, the roofline
	// alone, where no other source ran on it).
	SeqLayer map[string]float64
	// HeldOut and Fitted sum up the source's figures predicted without
	// and with its rows in the fit.
	HeldOut, Fitted Accuracy
	// BeyondHeldOut and BeyondFitted count its gated figures off by more
	// than 25%, known misses included.
	BeyondHeldOut, BeyondFitted int
}

// CrossValidation is a check held out by source: each source's rows
// replayed with the constants the other sources' rows give.
type CrossValidation struct {
	// Checked is every row as its fold predicted it.
	Checked []Checked
	Folds   []Fold
	// InSample is the overhead each engine's rows give, all of them;
	// SeqLayer the SeqLayerUs each fitted card's rows give.
	InSample map[string]time.Duration
	SeqLayer map[string]float64
}

// CrossValidate refits the rows' constants without each source in turn
// and predicts that source's rows with them.
func CrossValidate(refs []Reference) (CrossValidation, error) {
	cv := CrossValidation{InSample: map[string]time.Duration{}, SeqLayer: map[string]float64{}}
	var engines, sources []string
	for _, r := range refs {
		if !slices.Contains(engines, engineKey(r)) {
			engines = append(engines, engineKey(r))
		}
		if !slices.Contains(sources, r.Source) {
			sources = append(sources, r.Source)
		}
	}
	for _, e := range engines {
		d, ok, err := fitOverhead(refs, e)
		if err != nil {
			return cv, err
		}
		if ok {
			cv.InSample[e] = d
		}
	}
	for _, card := range fittedCards(refs) {
		us, _, err := fitSeqLayer(refs, card, cv.InSample)
		if err != nil {
			return cv, err
		}
		cv.SeqLayer[card] = us
	}
	fitted, err := checkWith(refs, rooflineVersion, constants{cv.InSample, cv.SeqLayer})
	if err != nil {
		return cv, err
	}
	for _, src := range sources {
		f, held, err := cv.fold(src, refs, fitted)
		if err != nil {
			return cv, err
		}
		cv.Checked = append(cv.Checked, held...)
		cv.Folds = append(cv.Folds, f)
	}
	return cv, nil
}

// fold holds src out: its rows predicted by the constants the other
// sources' rows fit (held), beside fitted, every row as the fit on all
// of them predicts it.
func (cv CrossValidation) fold(src string, refs []Reference, fitted []Checked) (Fold, []Checked, error) {
	var in, rest []Reference
	for _, r := range refs {
		if r.Source == src {
			in = append(in, r)
		} else {
			rest = append(rest, r)
		}
	}
	e := engineKey(in[0])
	f := Fold{Source: src, Engine: e, InSample: cv.InSample[e]}
	over, pooled, err := foldOverheads(src, in, rest)
	if err != nil {
		return f, nil, err
	}
	f.Pooled = pooled[e]
	f.Overhead = over[e]
	if f.SeqLayer, err = foldSeqLayers(in, rest, over); err != nil {
		return f, nil, err
	}
	held, err := checkWith(in, rooflineVersion, constants{over, f.SeqLayer})
	if err != nil {
		return f, nil, err
	}
	f.HeldOut = Summarize(held, nil)
	var own []Checked
	for _, c := range fitted {
		if c.Source == src {
			own = append(own, c)
		}
	}
	f.Fitted = Summarize(own, nil)
	f.BeyondHeldOut, f.BeyondFitted = beyond(held, 0.25), beyond(own, 0.25)
	return f, held, nil
}

// foldOverheads refits every engine a held-out source's rows ran (today
// one each) on the other sources' rows, so no row of it is priced with
// the in-sample fit; an engine no other source ran takes the overhead
// every engine's rows give (pooled).
func foldOverheads(src string, in, rest []Reference) (map[string]time.Duration, map[string]bool, error) {
	over, pooled := map[string]time.Duration{}, map[string]bool{}
	for _, r := range in {
		k := engineKey(r)
		if _, done := over[k]; done {
			continue
		}
		d, ok, err := fitOverhead(rest, k)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			pooled[k] = true
			if d, ok, err = fitOverhead(rest, ""); err != nil {
				return nil, nil, err
			} else if !ok {
				return nil, nil, fmt.Errorf("held out %s: no other source has a gated figure to fit on", ShortSource(src))
			}
		}
		over[k] = d
	}
	return over, pooled, nil
}

// foldSeqLayers refits the SeqLayerUs of every fitted card a held-out
// source's rows ran on, on the other sources' rows of that card; a card
// no other source ran on is priced by the roofline alone (0).
func foldSeqLayers(in, rest []Reference, over map[string]time.Duration) (map[string]float64, error) {
	seq := map[string]float64{}
	for _, card := range fittedCards(in) {
		us, _, err := fitSeqLayer(rest, card, over)
		if err != nil {
			return nil, err
		}
		seq[card] = us
	}
	return seq, nil
}

// fittedCards names the cards of refs' rows that have a SeqLayerUs of
// their own.
func fittedCards(refs []Reference) []string {
	var out []string
	for _, r := range refs {
		if onFittedCard(r) && !slices.Contains(out, r.GPU) {
			out = append(out, r.GPU)
		}
	}
	return out
}

// onFittedCard reports whether r ran on a card with a SeqLayerUs of its
// own.
func onFittedCard(r Reference) bool {
	g, ok := LookupGPU(r.GPU)
	return ok && g.SeqLayerUs > 0
}

// seqLayerRange bounds the fitted SeqLayerUs, in microseconds.
var seqLayerRange = [2]float64{0, 10}

// fitSeqLayer finds the SeqLayerUs of card that brings its rows' gated
// figures closest to the published ones (the least mean |log| ratio),
// each engine priced with the step overhead over gives it. ok is false
// when refs hold no gated figure on the card.
func fitSeqLayer(refs []Reference, card string, over map[string]time.Duration) (us float64, ok bool, err error) {
	var rows []Reference
	for _, r := range refs {
		if r.GPU == card && !r.PastKnee {
			rows = append(rows, r)
		}
	}
	x, ok, err := fitConstant(rows, seqLayerRange[0], seqLayerRange[1], 16, func(x float64) constants {
		return constants{over, map[string]float64{card: x}}
	})
	// Hundredths of a microsecond: the fit is not finer than that.
	return math.Round(x*100) / 100, ok, err
}

// meanAbsLog is the mean |log| ratio of simulated to published over cs's
// gated figures (+Inf for none): what the fits minimize.
func meanAbsLog(cs []Checked) float64 {
	sum, n := 0.0, 0
	for _, c := range cs {
		for _, f := range c.Figures() {
			if _, ungated := c.Ungated[f.Name]; ungated || !(f.Simulated > 0) || !(f.Published > 0) {
				continue
			}
			sum += math.Abs(math.Log(f.Simulated / f.Published))
			n++
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return sum / float64(n)
}

// fitOverhead finds the step overhead of engine (every engine, priced
// with one overhead, when engine is "") that brings its rows' gated
// figures closest to the published ones: the least mean |log| ratio.
// Known misses count (the fit rests on no hand-written label). Rows on
// a card with a constant of its own (fittedCards) are left to it. ok is
// false when refs hold no other gated figure of the engine.
func fitOverhead(refs []Reference, engine string) (d time.Duration, ok bool, err error) {
	var rows []Reference
	for _, r := range refs {
		if (engine == "" || engineKey(r) == engine) && !r.PastKnee && !onFittedCard(r) {
			rows = append(rows, r)
		}
	}
	x, ok, err := fitConstant(rows, math.Log(float64(overheadRange[0])), math.Log(float64(overheadRange[1])), 14, func(x float64) constants {
		d := time.Duration(math.Exp(x))
		over := map[string]time.Duration{engine: d}
		if engine == "" {
			for _, e := range Engines {
				over[e.Name] = d
			}
		}
		return constants{overhead: over}
	})
	if !ok || err != nil {
		return 0, false, err
	}
	// Whole microseconds: the fit is not finer than that, and a printed
	// constant reads as one.
	return time.Duration(math.Exp(x)).Round(time.Microsecond), true, nil
}

// fitConstant finds the x in [lo, hi] whose constants (priced) bring
// rows' gated figures closest to the published ones: the least mean
// |log| ratio, by golden-section search of iters steps. ok is false when
// rows hold no gated figure.
func fitConstant(rows []Reference, lo, hi float64, iters int, priced func(x float64) constants) (float64, bool, error) {
	if len(rows) == 0 {
		return 0, false, nil
	}
	loss := func(x float64) (float64, error) {
		cs, err := checkWith(rows, rooflineVersion, priced(x))
		if err != nil {
			return 0, err
		}
		return meanAbsLog(cs), nil
	}
	x, err := goldenMin(loss, lo, hi, iters)
	if err != nil {
		return 0, false, err
	}
	if l, err := loss(x); err != nil || math.IsInf(l, 1) {
		return 0, false, err
	}
	return x, true, nil
}

// goldenMin narrows [a, b] around a minimum of f by golden-section search,
// iters times (each keeps 0.618 of the bracket), and returns its middle.
func goldenMin(f func(float64) (float64, error), a, b float64, iters int) (float64, error) {
	const g = 0.6180339887498949
	c, d := b-g*(b-a), a+g*(b-a)
	fc, err := f(c)
	if err != nil {
		return 0, err
	}
	fd, err := f(d)
	if err != nil {
		return 0, err
	}
	for range iters {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			if fc, err = f(c); err != nil {
				return 0, err
			}
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			if fd, err = f(d); err != nil {
				return 0, err
			}
		}
	}
	return (a + b) / 2, nil
}

// ShortSource is a source's name without its parentheses and address, to
// label a fold.
func ShortSource(src string) string {
	s := src
	for {
		i := strings.Index(s, " (")
		j := strings.Index(s, ")")
		if i < 0 || j < i {
			break
		}
		s = s[:i] + s[j+1:]
	}
	s, _, _ = strings.Cut(s, ": ")
	return s
}

// Markdown renders the cross-validation: the held-out summary first, then
// a row per source, naming what a source alone taught the model where
// more of its figures miss by 25% without it than with it.
func (cv CrossValidation) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Held out by source, each source's rows predicted by the constants the other sources' rows fit (the engines' step overheads, MI300X's seq_layer_us; the kernel shares come from timed kernels, not rows): %s.\n\n", cv.Summary())
	b.WriteString("| source held out | engine | figures | step overhead without it (with all) | median abs. error held out | with all | beyond ±25% held out | with all |\n|---|---|---|---|---|---|---|---|\n")
	var taught []string
	for _, f := range cv.Folds {
		without := f.Overhead.String()
		switch {
		case f.Pooled:
			without += ", every engine's rows: no other source ran it"
		case f.Overhead <= overheadRange[0] || f.Overhead >= overheadRange[1]:
			without += ", the fit's bound"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s (%v) | %.0f%% | %.0f%% | %d | %d |\n", ShortSource(f.Source), f.Engine, f.HeldOut.Figures,
			without, f.InSample, 100*f.HeldOut.MedianAbsErr, 100*f.Fitted.MedianAbsErr, f.BeyondHeldOut, f.BeyondFitted)
		if f.BeyondHeldOut > f.BeyondFitted {
			taught = append(taught, fmt.Sprintf("%s alone taught the model %s: %d of its figures miss by 25%% without it, %d with it",
				ShortSource(f.Source), cv.taughtBy(f), f.BeyondHeldOut, f.BeyondFitted))
		}
	}
	b.WriteString(cv.seqLayerMarkdown())
	if len(taught) == 0 {
		b.WriteString("\nNo source's figures miss by 25% more often held out than fitted on: none alone taught the model a constant its figures need.\n")
	} else {
		b.WriteString("\n" + strings.Join(taught, ".\n") + ".\n")
	}
	return b.String()
}

// taughtBy names the constants fold f's source moves: those it was
// priced with held out that differ from the fit on every row.
func (cv CrossValidation) taughtBy(f Fold) string {
	var out []string
	if f.Overhead != f.InSample {
		out = append(out, fmt.Sprintf("the %s step overhead (%v with it, %v without)", f.Engine, f.InSample, f.Overhead))
	}
	for _, card := range slices.Sorted(maps.Keys(f.SeqLayer)) {
		if us, all := f.SeqLayer[card], cv.SeqLayer[card]; us != all {
			out = append(out, fmt.Sprintf("the %s card's seq_layer_us (%.2f µs with it, %.2f without)", card, all, us))
		}
	}
	if len(out) == 0 {
		return "nothing its constants show (they fit the same without it)"
	}
	return strings.Join(out, " and ")
}

// seqLayerMarkdown says what each fitted card's SeqLayerUs was, on every
// row and without each source that ran on the card.
func (cv CrossValidation) seqLayerMarkdown() string {
	var b strings.Builder
	for _, card := range slices.Sorted(maps.Keys(cv.SeqLayer)) {
		var without []string
		for _, f := range cv.Folds {
			if us, ok := f.SeqLayer[card]; ok {
				without = append(without, fmt.Sprintf("%.2f µs without %s", us, ShortSource(f.Source)))
			}
		}
		fmt.Fprintf(&b, "\nThe %s card's cost a sequence and a layer (seq_layer_us), fitted on its rows: %.2f µs on all of them; %s.\n", card, cv.SeqLayer[card], strings.Join(without, "; "))
	}
	return b.String()
}

// Summary sums up every row as its fold predicted it, the figures beyond
// ±25% (known misses included) counted.
func (cv CrossValidation) Summary() string {
	return fmt.Sprintf("%s; %d beyond ±25%%", Summarize(cv.Checked, nil), beyond(cv.Checked, 0.25))
}

// beyond counts the gated figures of cs off by more than tol, known
// misses included.
func beyond(cs []Checked, tol float64) int {
	n := 0
	for _, c := range cs {
		if c.PastKnee {
			continue
		}
		for _, f := range c.Figures() {
			if _, ungated := c.Ungated[f.Name]; !ungated && math.Abs(f.Error) > tol {
				n++
			}
		}
	}
	return n
}
