package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
)

// imagePool holds the images a workload draws from, as data URLs: a few
// synthesized per resolution (so a server's multimodal cache meets
// different images, as in traffic), or every image of a directory.
type imagePool struct {
	urls   [][]string // by size (or one group: the directory's files)
	cdf    []float64  // cumulative weights of the groups
	count  Length     // images per request; nil: one
	pick   *rand.Rand
	lastSz int // the group the latest image came from, for tests
}

// imageVariants is how many different images each resolution gets.
const imageVariants = 4

// Bounds on a workload's images, which a run holds as data URLs and
// copies into every request body that carries them. A file past a bound
// is refused by its size before it is read; a run and `benchci validate`
// apply the same. (suite.MaxImagesPerRequest bounds the count.)
const (
	// MaxImageFile bounds one image file of workload.images.dir.
	MaxImageFile = suite.MaxImageFile
	// MaxImageBytes bounds the images a workload holds in all: the
	// files of its directory, or the images it synthesizes.
	MaxImageBytes = 64 << 20
	// MaxImageFiles bounds the images of a directory.
	MaxImageFiles = 4096
	// MaxImageRequestBytes bounds the images one request may carry: its
	// largest count times its largest image (with images.turns 'every',
	// times the turns, whose images the last turn resends). As data URLs
	// in the body they are a third larger.
	MaxImageRequestBytes = 16 << 20
)

// newImagePool draws the workload's images; run (the run's prompt salt,
// 0 for none) changes synthesized pixels, not sizes or counts, so that a
// server's multimodal cache cannot serve one salted run from the last.
func newImagePool(im suite.Images, w suite.Workload, seed, run uint64) (*imagePool, error) {
	p := &imagePool{pick: rand.New(rand.NewPCG(seed, streamImage))}
	if im.Count != nil {
		var err error
		if p.count, err = newLength(*im.Count, rand.NewPCG(seed, streamImage+100), suite.MaxImagesPerRequest, false); err != nil {
			return nil, fmt.Errorf("workload.images.count: %w", err)
		}
	}
	if im.Dir != "" {
		urls, err := dirDataURLs(im.Dir)
		if err != nil {
			return nil, fmt.Errorf("workload.images.dir: %w", err)
		}
		p.urls, p.cdf = [][]string{urls}, []float64{1}
		return p, p.checkRequest(im, w)
	}
	if len(im.Sizes) > suite.MaxImageSizes {
		return nil, fmt.Errorf("workload.images.sizes: %d resolutions, more than the %d a workload may synthesize", len(im.Sizes), suite.MaxImageSizes)
	}
	format := im.Format
	if format == "" {
		format = "jpeg"
	}
	// Weights are divided by the largest before they are added, so that
	// weights of 1e308 (whose sum overflows) share as their ratio says.
	top, total := 0.0, 0.0
	for i, sz := range im.Sizes {
		if !(sz.Weight >= 0) || math.IsInf(sz.Weight, 0) {
			return nil, fmt.Errorf("workload.images.sizes[%d].weight: must be a non-negative number, got %v", i, sz.Weight)
		}
		top = max(top, sz.Weight)
	}
	for _, sz := range im.Sizes {
		if top > 0 {
			total += sz.Weight / top
		}
	}
	acc, held := 0.0, 0
	for i, sz := range im.Sizes {
		if sz.Width < 1 || sz.Height < 1 || sz.Width > 8192 || sz.Height > 8192 || sz.Width*sz.Height > suite.MaxImagePixels {
			return nil, fmt.Errorf("workload.images.sizes[%d]: resolution %dx%d", i, sz.Width, sz.Height)
		}
		w := 1 / float64(len(im.Sizes))
		if total > 0 {
			w = sz.Weight / top / total
		}
		acc += w
		p.cdf = append(p.cdf, acc)
		urls, err := synthImages(synthKey{seed + run, streamImage + 200 + uint64(i), sz.Width, sz.Height, format}, MaxImageBytes*4/3-held)
		if err != nil {
			return nil, err
		}
		for _, u := range urls {
			if held += len(u); held > MaxImageBytes*4/3 {
				return nil, fmt.Errorf("workload.images.sizes[%d]: the synthesized %s images take more than the %s a workload may hold: use smaller or fewer sizes, or jpeg", i, format, inputfile.Size(MaxImageBytes))
			}
		}
		p.urls = append(p.urls, urls)
	}
	return p, p.checkRequest(im, w)
}

// checkRequest refuses a pool whose largest image, times the most a
// request carries, passes MaxImageRequestBytes.
func (p *imagePool) checkRequest(im suite.Images, w suite.Workload) error {
	largest := 0 // bytes of image, not of data URL
	for _, g := range p.urls {
		for _, u := range g {
			largest = max(largest, imageBytes(u))
		}
	}
	n := 1
	if im.Count != nil {
		n = countUpper(*im.Count, suite.MaxImagesPerRequest)
	}
	if im.Turns == suite.ImagesEveryTurn && w.Prompts.Kind == suite.PromptMultiTurn {
		n *= max(1, min(w.Prompts.Turns, suite.MaxTurns))
	}
	if float64(n)*float64(largest) > MaxImageRequestBytes {
		return fmt.Errorf("workload.images: a request may carry %d images of up to %s, more than the %s of images a request may carry", n, inputfile.Size(int64(largest)), inputfile.Size(MaxImageRequestBytes))
	}
	return nil
}

// imageBytes is the size of a data URL's image.
func imageBytes(u string) int {
	b64 := u[strings.IndexByte(u, ',')+1:]
	return len(b64)/4*3 - (len(b64) - len(strings.TrimRight(b64, "=")))
}

// countUpper is the most a count distribution draws, clipped to limit.
func countUpper(d suite.Dist, limit int) int {
	hi := float64(limit)
	switch d.Kind {
	case suite.DistFixed:
		hi = d.Value
	case suite.DistUniform:
		hi = d.Max
	case suite.DistEmpirical:
		hi = 0
		for _, v := range d.Values {
			hi = max(hi, v)
		}
	default:
		if d.Max > 0 {
			hi = d.Max
		}
	}
	if !(hi <= float64(limit)) {
		return limit
	}
	return max(1, int(math.Round(hi)))
}

// next draws one request's images.
func (p *imagePool) next() []string {
	n := 1
	if p.count != nil {
		n = p.count.Sample()
	}
	out := make([]string, 0, n)
	for range n {
		g, _ := slices.BinarySearch(p.cdf, p.pick.Float64())
		g = min(g, len(p.urls)-1)
		p.lastSz = g
		out = append(out, p.urls[g][p.pick.IntN(len(p.urls[g]))])
	}
	return out
}

// synthKey is what a size's synthesized images are made from.
type synthKey struct {
	seed, stream uint64
	w, h         int
	format       string
}

// synthesized keeps the images this process synthesized, by what makes
// them: a sweep builds a generator for each point and trial, and
// encoding a megapixel image was most of a multimodal point's CPU before
// its first request. Images are strings, shared read-only.
var synthesized = struct {
	sync.Mutex
	m     map[synthKey][]string
	bytes int
}{m: map[synthKey][]string{}}

// maxSynthesizedBytes bounds what synthesized keeps; past it, it starts
// again empty.
const maxSynthesizedBytes = 64 << 20

// synthImages returns the imageVariants images of k, made once; it stops
// early, keeping nothing, once they pass room bytes (the caller refuses).
func synthImages(k synthKey, room int) ([]string, error) {
	synthesized.Lock()
	urls, ok := synthesized.m[k]
	synthesized.Unlock()
	if ok {
		return urls, nil
	}
	r := rand.New(rand.NewPCG(k.seed, k.stream))
	size := 0
	for range imageVariants {
		u, err := synthImage(k.w, k.h, k.format, r)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
		if size += len(u); size > room {
			return urls, nil // refused by the caller; not kept
		}
	}
	synthesized.Lock()
	defer synthesized.Unlock()
	if kept, ok := synthesized.m[k]; ok { // made at once by another generator
		return kept, nil
	}
	if size > maxSynthesizedBytes {
		return urls, nil
	}
	if synthesized.bytes+size > maxSynthesizedBytes {
		clear(synthesized.m)
		synthesized.bytes = 0
	}
	synthesized.m[k] = urls
	synthesized.bytes += size
	return urls, nil
}

// synthImage draws a w x h image of smooth colour bands and noise (so it
// compresses like a photo, not like a flat fill) and encodes it.
func synthImage(w, h int, format string, r *rand.Rand) (string, error) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	base := [3]int{r.IntN(256), r.IntN(256), r.IntN(256)}
	for y := range h {
		for x := range w {
			n := r.IntN(32)
			img.SetRGBA(x, y, color.RGBA{uint8((base[0] + x*255/max(w, 1) + n) % 256), uint8((base[1] + y*255/max(h, 1) + n) % 256), uint8((base[2] + n*4) % 256), 255})
		}
	}
	var b bytes.Buffer
	var err error
	mime := "image/jpeg"
	if format == "png" {
		mime = "image/png"
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 85})
	}
	if err != nil {
		return "", fmt.Errorf("encode a %dx%d %s: %w", w, h, format, err)
	}
	return dataURL(mime, b.Bytes()), nil
}

// dataURL encodes an image as a data URL, with no copy beyond the URL.
func dataURL(mime string, b []byte) string {
	var sb strings.Builder
	head := "data:" + mime + ";base64,"
	sb.Grow(len(head) + base64.StdEncoding.EncodedLen(len(b)))
	sb.WriteString(head)
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	enc.Write(b) // a strings.Builder does not fail
	enc.Close()
	return sb.String()
}

// dirDataURLs reads a directory's images as data URLs, each checked to
// decode. Their sizes are checked before any is read: at most
// MaxImageFiles files, each at most MaxImageFile bytes, MaxImageBytes in
// all; each is opened as inputfile does (a regular file, its size checked
// again on the descriptor, read no further than it).
func dirDataURLs(dir string) ([]string, error) {
	files, err := suite.ImageFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) > MaxImageFiles {
		return nil, fmt.Errorf("%s holds %d images, more than the %d a workload may hold", dir, len(files), MaxImageFiles)
	}
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if st.Size() > MaxImageFile {
			return nil, fmt.Errorf("%s is %s, more than the %s an image may be: %w", f, inputfile.Size(st.Size()), inputfile.Size(MaxImageFile), inputfile.ErrTooLarge)
		}
		if total += st.Size(); total > MaxImageBytes {
			return nil, fmt.Errorf("%s holds more than the %s of images a workload may hold: %w", dir, inputfile.Size(MaxImageBytes), inputfile.ErrTooLarge)
		}
	}
	var urls []string
	total = 0
	for _, f := range files {
		u, n, err := fileDataURL(f)
		if err != nil {
			return nil, err
		}
		if total += n; total > MaxImageBytes { // the files grew since
			return nil, fmt.Errorf("%s holds more than the %s of images a workload may hold: %w", dir, inputfile.Size(MaxImageBytes), inputfile.ErrTooLarge)
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// fileDataURL reads an image file of at most MaxImageFile bytes as a
// data URL, checking it decodes; n is its size.
func fileDataURL(path string) (u string, n int64, err error) {
	b, err := inputfile.ReadFile(path, MaxImageFile)
	if err != nil {
		return "", 0, err
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return dataURL("image/"+format, b), int64(len(b)), nil
}
