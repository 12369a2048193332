//go:build ignore

// growthplot draws docs/img/growth.png from docs/img/growth.csv (make bench/growth's
// figures; docs/performance.md#growth): wall time against rows on log-log axes for our
// burn-down, the raw-SQL floor and River, with a line of slope 1 (linear growth) through our
// first point. Standard library only; labels use a built-in 5x7 pixel font.
//
//	go run scripts/growthplot.go [-in docs/img/growth.csv] [-out docs/img/growth.png]
//
// The CSV has a header and one line per size: rows,ours_rows_per_s,floor_rows_per_s,river_jobs_per_s.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"strconv"
)

func main() {
	in := flag.String("in", "docs/img/growth.csv", "figures: rows,ours_rows_per_s,floor_rows_per_s,river_jobs_per_s")
	out := flag.String("out", "docs/img/growth.png", "PNG to write")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) < 3 {
		log.Fatalf("%s: want a header and at least two sizes (%v)", *in, err)
	}
	type point struct{ rows, secs float64 }
	series := make([][]point, 3) // ours, floor, River
	for _, r := range recs[1:] {
		if len(r) != 4 {
			log.Fatalf("%s: line %v: want 4 fields", *in, r)
		}
		n, err := strconv.ParseFloat(r[0], 64)
		if err != nil {
			log.Fatal(err)
		}
		for i := range 3 {
			rate, err := strconv.ParseFloat(r[i+1], 64)
			if err != nil || rate <= 0 {
				continue // not measured
			}
			series[i] = append(series[i], point{n, n / rate})
		}
	}
	const w, h, left, right, top, bottom = 640, 400, 70, 20, 30, 50
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, img.Bounds(), color.RGBA{255, 255, 255, 255})
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s {
			minX, maxX = math.Min(minX, p.rows), math.Max(maxX, p.rows)
			minY, maxY = math.Min(minY, p.secs), math.Max(maxY, p.secs)
		}
	}
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(v float64) int { return left + int((math.Log10(v)-lx0)/(lx1-lx0)*float64(w-left-right)) }
	py := func(v float64) int { return h - bottom - int((math.Log10(v)-ly0)/(ly1-ly0)*float64(h-top-bottom)) }
	grey, black := color.RGBA{220, 220, 220, 255}, color.RGBA{0, 0, 0, 255}
	for e := lx0; e <= lx1; e++ {
		x := px(math.Pow(10, e))
		line(img, x, top, x, h-bottom, grey)
		text(img, x-10, h-bottom+8, short(math.Pow(10, e)), black)
	}
	for e := ly0; e <= ly1; e++ {
		y := py(math.Pow(10, e))
		line(img, left, y, w-right, y, grey)
		text(img, 8, y-3, short(math.Pow(10, e))+"S", black)
	}
	line(img, left, h-bottom, w-right, h-bottom, black)
	line(img, left, top, left, h-bottom, black)
	text(img, w/2-40, h-18, "ROWS (LOG)", black)
	text(img, left, 10, "WALL TIME OF W1 BURN-DOWN (LOG): LINEAR = SLOPE 1", black)
	colors := []color.RGBA{{200, 30, 30, 255}, {30, 90, 200, 255}, {30, 150, 60, 255}}
	names := []string{"OURS", "FLOOR", "RIVER"}
	if len(series[0]) > 0 { // slope 1 through our first point
		p := series[0][0]
		line(img, px(p.rows), py(p.secs), px(math.Pow(10, lx1)), py(p.secs*math.Pow(10, lx1)/p.rows), grey)
	}
	for i, s := range series {
		for j, p := range s {
			x, y := px(p.rows), py(p.secs)
			fill(img, image.Rect(x-3, y-3, x+4, y+4), colors[i])
			if j > 0 {
				line(img, px(s[j-1].rows), py(s[j-1].secs), x, y, colors[i])
			}
		}
		fill(img, image.Rect(left+20, top+10+i*14, left+30, top+17+i*14), colors[i])
		text(img, left+36, top+10+i*14, names[i], black)
	}
	o, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(o, img); err != nil {
		log.Fatal(err)
	}
	if err := o.Close(); err != nil {
		log.Fatal(err)
	}
}

// short formats a power of ten: 0.1, 1, 10, 100, 1K, 10K, 100K, 1M.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "K"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// line draws a straight line (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// glyphs is a 5x7 pixel font of the characters the plot writes (rows top to bottom, bit 4 =
// leftmost column).
var glyphs = map[rune][7]byte{
	'0': {14, 17, 19, 21, 25, 17, 14}, '1': {4, 12, 4, 4, 4, 4, 14}, '2': {14, 17, 1, 2, 4, 8, 31},
	'3': {31, 2, 4, 2, 1, 17, 14}, '4': {2, 6, 10, 18, 31, 2, 2}, '5': {31, 16, 30, 1, 1, 17, 14},
	'6': {6, 8, 16, 30, 17, 17, 14}, '7': {31, 1, 2, 4, 8, 8, 8}, '8': {14, 17, 17, 14, 17, 17, 14},
	'9': {14, 17, 17, 15, 1, 2, 12}, '.': {0, 0, 0, 0, 0, 12, 12}, ':': {0, 12, 12, 0, 12, 12, 0},
	'=': {0, 0, 31, 0, 31, 0, 0}, '-': {0, 0, 0, 31, 0, 0, 0}, '(': {2, 4, 8, 8, 8, 4, 2},
	')': {8, 4, 2, 2, 2, 4, 8}, ' ': {},
	'A': {14, 17, 17, 31, 17, 17, 17}, 'B': {30, 17, 17, 30, 17, 17, 30}, 'C': {14, 17, 16, 16, 16, 17, 14},
	'D': {30, 17, 17, 17, 17, 17, 30}, 'E': {31, 16, 16, 30, 16, 16, 31}, 'F': {31, 16, 16, 30, 16, 16, 16},
	'G': {14, 17, 16, 23, 17, 17, 15}, 'H': {17, 17, 17, 31, 17, 17, 17}, 'I': {14, 4, 4, 4, 4, 4, 14},
	'K': {17, 18, 20, 24, 20, 18, 17}, 'L': {16, 16, 16, 16, 16, 16, 31}, 'M': {17, 27, 21, 21, 17, 17, 17},
	'N': {17, 17, 25, 21, 19, 17, 17}, 'O': {14, 17, 17, 17, 17, 17, 14}, 'P': {30, 17, 17, 30, 16, 16, 16},
	'R': {30, 17, 17, 30, 20, 18, 17}, 'S': {15, 16, 16, 14, 1, 1, 30}, 'T': {31, 4, 4, 4, 4, 4, 4},
	'U': {17, 17, 17, 17, 17, 17, 14}, 'V': {17, 17, 17, 17, 17, 10, 4}, 'W': {17, 17, 17, 21, 21, 21, 10},
}

// text writes s at (x, y) in the 5x7 font; a character without a glyph is an error.
func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	for _, r := range s {
		g, ok := glyphs[r]
		if !ok {
			log.Fatal(fmt.Sprintf("growthplot: no glyph for %q", r))
		}
		for row, bits := range g {
			for col := 0; col < 5; col++ {
				if bits&(1<<(4-col)) != 0 {
					img.SetRGBA(x+col, y+row, c)
				}
			}
		}
		x += 6
	}
}
