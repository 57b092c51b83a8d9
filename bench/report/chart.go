package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette is the Okabe-Ito palette, told apart by most colour-blind
// readers too.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // purple
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
	color.RGBA{0x99, 0x99, 0x99, 0xff}, // grey
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// sans is the font of every chart text.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// panel is one chart: a plot and its legend, which is drawn to the right
// of the plot rather than over the data.
type panel struct {
	*plot.Plot
	legend plot.Legend
}

// newPanel returns a panel with a title, axis labels, sans-serif text and
// a light horizontal grid.
func newPanel(title, xLabel, yLabel string) *panel {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Title.TextStyle.Font = font.From(sans, 13)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.Y.Tick.Marker = linearTicks{}
	p.Title.Padding = vg.Points(6)
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0
	grid.Horizontal.Color = color.Gray{0xdd}
	p.Add(grid)
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 10)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(14)
	l.Padding = vg.Points(3)
	l.YOffs = -vg.Points(28) // level with the top of the data area
	return &panel{Plot: p, legend: l}
}

// bars draws one bar per category i, at X = i shifted by offset, from lo[i]
// to hi[i]; with lo nil, from the bottom of the Y axis. A NaN in hi leaves
// the category without a bar.
type bars struct {
	lo, hi []float64
	width  vg.Length
	offset vg.Length
	color  color.Color
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, hi := range b.hi {
		lo := p.Y.Min
		if b.lo != nil {
			lo = math.Max(b.lo[i], p.Y.Min)
		}
		hi = math.Min(hi, p.Y.Max)
		if math.IsNaN(hi) || hi <= lo {
			continue
		}
		x := trX(float64(i)) + b.offset
		y0, y1 := trY(lo), trY(hi)
		if y1-y0 < vg.Points(1) { // keep a sliver visible
			y1 = y0 + vg.Points(1)
		}
		pts := []vg.Point{{X: x - b.width/2, Y: y0}, {X: x - b.width/2, Y: y1}, {X: x + b.width/2, Y: y1}, {X: x + b.width/2, Y: y0}}
		c.FillPolygon(b.color, c.ClipPolygonY(pts))
	}
}

// DataRange implements plot.DataRanger: the bars' tops, and their bottoms
// when they have their own.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for i, hi := range b.hi {
		if math.IsNaN(hi) {
			continue
		}
		ymin, ymax = math.Min(ymin, hi), math.Max(ymax, hi)
		if b.lo != nil {
			ymin = math.Min(ymin, b.lo[i])
		}
	}
	return 0, float64(len(b.hi) - 1), ymin, ymax
}

// GlyphBoxes implements plot.GlyphBoxer, so that the axes leave room for
// the outermost bars.
func (b *bars) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, len(b.hi))
	for i := range b.hi {
		boxes[i] = plot.GlyphBox{X: p.X.Norm(float64(i)), Rectangle: vg.Rectangle{
			Min: vg.Point{X: b.offset - b.width/2}, Max: vg.Point{X: b.offset + b.width/2}}}
	}
	return boxes
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (b *bars) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	pts := []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}}
	c.FillPolygon(b.color, pts)
}

// groupOffset returns the X shift of bar j of k bars of width w side by
// side around a category.
func groupOffset(j, k int, w vg.Length) vg.Length {
	return w * vg.Length(float64(j)-float64(k-1)/2)
}

// refLine returns a dashed horizontal line at y.
func refLine(y float64, c color.Color) *plotter.Function {
	f := plotter.NewFunction(func(float64) float64 { return y })
	f.Color = c
	f.Width = vg.Points(1.2)
	f.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	return f
}

// logAxis sets up the Y axis for values drawn as their base-10
// logarithm (see log10All) between lo and hi, labelled with the values
// themselves. (The axis itself stays linear: gonum's LogScale centres the
// axis label's room on the arithmetic mean, which leaves a gap above the
// data.)
func logAxis(p *panel, lo, hi float64, t logTicks) {
	p.Y.Tick.Marker = t
	p.Y.Min, p.Y.Max = math.Log10(lo), math.Log10(hi)
}

// log10All returns the base-10 logarithm of every value; values <= 0
// become NaN (no bar).
func log10All(series [][]float64) [][]float64 {
	out := make([][]float64, len(series))
	for i, s := range series {
		out[i] = make([]float64, len(s))
		for j, v := range s {
			out[i][j] = math.NaN()
			if v > 0 {
				out[i][j] = math.Log10(v)
			}
		}
	}
	return out
}

// logTicks labels multiples of every power of ten on an axis of base-10
// logarithms: 1, 2 and 5 times, or only 1 time with decades set.
type logTicks struct {
	decades bool
	label   func(float64) string // nil: trimFloat
}

// Ticks implements plot.Ticker; min and max are logarithms.
func (t logTicks) Ticks(min, max float64) []plot.Tick {
	mults := []float64{1, 2, 5}
	if t.decades {
		mults = []float64{1}
	}
	label := t.label
	if label == nil {
		label = trimFloat
	}
	var ticks []plot.Tick
	for e := math.Floor(min); e <= math.Ceil(max); e++ {
		for _, m := range mults {
			v := math.Log10(m) + e
			if v < min-1e-9 || v > max+1e-9 {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label(m * math.Pow(10, e))})
		}
	}
	return ticks
}

// byteSize writes a power-of-ten byte count: 100 B, 10 kB, 1 MB.
func byteSize(v float64) string {
	switch {
	case v >= 1e9:
		return trimFloat(v/1e9) + " GB"
	case v >= 1e6:
		return trimFloat(v/1e6) + " MB"
	case v >= 1e3:
		return trimFloat(v/1e3) + " kB"
	}
	return trimFloat(v) + " B"
}

// linearTicks labels about eight round values (1, 2 or 5 times a power of
// ten apart) on a linear axis, with unlabelled ticks halfway.
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: trimFloat(min)}}
	}
	raw := (max - min) / 8
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: trimFloat(math.Round(v/step) * step)})
		if half := v + step/2; half <= max {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// trimFloat writes v without trailing zeros: 0.5, 2, 1000, 1e+06.
func trimFloat(v float64) string {
	return fmt.Sprintf("%.6g", v)
}

// legendWidth is the room kept right of every plot for its legend.
var legendWidth = vg.Points(190)

// svgOf draws panels stacked in a column of width w, each h high, each
// legend right of its plot, and returns the SVG document.
func svgOf(panels []*panel, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h*vg.Length(len(panels)))
	dc := draw.New(c)
	plots := dc
	plots.Max.X -= legendWidth
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p.Plot}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(14), PadTop: vg.Points(6), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, plots)
	for i, p := range panels {
		p.Draw(canvases[i][0])
		lc := canvases[i][0]
		lc.Min.X, lc.Max.X = plots.Max.X+vg.Points(4), dc.Max.X
		p.legend.Draw(lc)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("shardis: render chart: %w", err)
	}
	// Name fallbacks with the same metrics, so that a viewer without
	// Liberation Sans keeps the layout.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}
