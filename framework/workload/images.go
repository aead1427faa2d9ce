package workload

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/suite"
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

func newImagePool(im suite.Images, seed uint64) (*imagePool, error) {
	p := &imagePool{pick: rand.New(rand.NewPCG(seed, streamImage))}
	if im.Count != nil {
		var err error
		if p.count, err = NewLength(*im.Count, rand.NewPCG(seed, streamImage+100)); err != nil {
			return nil, fmt.Errorf("workload.images.count: %w", err)
		}
	}
	if im.Dir != "" {
		files, err := ImageFiles(im.Dir)
		if err != nil {
			return nil, fmt.Errorf("workload.images.dir: %w", err)
		}
		var urls []string
		for _, f := range files {
			u, err := fileDataURL(f)
			if err != nil {
				return nil, fmt.Errorf("workload.images.dir: %w", err)
			}
			urls = append(urls, u)
		}
		p.urls, p.cdf = [][]string{urls}, []float64{1}
		return p, nil
	}
	format := im.Format
	if format == "" {
		format = "jpeg"
	}
	total := 0.0
	for _, sz := range im.Sizes {
		total += sz.Weight
	}
	acc := 0.0
	for i, sz := range im.Sizes {
		if sz.Width < 1 || sz.Height < 1 || sz.Width > 8192 || sz.Height > 8192 {
			return nil, fmt.Errorf("workload.images.sizes[%d]: resolution %dx%d", i, sz.Width, sz.Height)
		}
		w := sz.Weight / total
		if total == 0 {
			w = 1 / float64(len(im.Sizes))
		}
		acc += w
		p.cdf = append(p.cdf, acc)
		r := rand.New(rand.NewPCG(seed, streamImage+200+uint64(i)))
		var urls []string
		for range imageVariants {
			u, err := synthImage(sz.Width, sz.Height, format, r)
			if err != nil {
				return nil, err
			}
			urls = append(urls, u)
		}
		p.urls = append(p.urls, urls)
	}
	return p, nil
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
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// ImageFiles lists a directory's PNG and JPEG files, by name.
func ImageFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg":
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no .png, .jpg or .jpeg files", dir)
	}
	return out, nil
}

// fileDataURL reads an image file as a data URL, checking it decodes.
func fileDataURL(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	_, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b), nil
}
