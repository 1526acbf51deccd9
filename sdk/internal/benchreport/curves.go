package benchreport

import (
	"fmt"
	"html"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A size segment in a variant's name ("deps=2000", "members=100",
// "entries=10000") makes the variant one point of a growth curve.
var sizeSegment = regexp.MustCompile(`^([a-z][a-z-]*)=([0-9]+)$`)

// Curve is how one benchmark's variants grow with a size: a series per
// variant name (with the size segment left out), a point per size.
type Curve struct {
	// Group is the benchmark the curve comes from.
	Group *Group
	// Key is what the size counts ("deps").
	Key string
	// Sizes are the sizes measured, ascending.
	Sizes []int
	// Series are the variants, in report order; Null is the index of the
	// null PM's series, or -1.
	Series []Series
	Null   int
	// Tool is the index of the ecosystem tool's series, or -1.
	Tool int
	// Load holds the one-minute load average each size was measured at
	// (the "load1" metric), 0 where not reported.
	Load []float64
}

// Series is one variant measured at each size.
type Series struct {
	// Name is the variant's name without its size segment ("cached").
	Name string
	Role Role
	// Ns holds the time per operation at each of the curve's sizes, 0
	// where the variant was not measured.
	Ns []float64
	// PeakKiB holds the peak resident memory at each size, 0 where not
	// reported.
	PeakKiB []float64
}

// hasPeak reports whether any size of s has a peak memory figure.
func (s *Series) hasPeak() bool {
	return slices.ContainsFunc(s.PeakKiB, func(v float64) bool { return v > 0 })
}

// VsTool returns series i's time at size index j divided by the tool's,
// or 0 when either is missing.
func (c *Curve) VsTool(i, j int) float64 {
	if c.Tool < 0 || c.Series[c.Tool].Ns[j] == 0 || c.Series[i].Ns[j] == 0 {
		return 0
	}
	return c.Series[i].Ns[j] / c.Series[c.Tool].Ns[j]
}

// faster words r, a time divided by a tool's, as how many times faster or
// slower than the tool.
func faster(r float64) string {
	if r <= 0 {
		return "—"
	}
	if r <= 1 {
		return times(1/r) + " faster"
	}
	return times(r) + " slower"
}

// times formats a ratio: two decimals below 100, none above.
func times(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// Ratio returns series i's time at size index j divided by the null PM's
// at that size, or 0 when either is missing or series i is measured in
// process (no process start to compare with the null PM's).
func (c *Curve) Ratio(i, j int) float64 {
	if c.Null < 0 || c.Series[c.Null].Ns[j] == 0 || c.Series[i].Ns[j] == 0 || c.Series[i].Role == RoleInProcess {
		return 0
	}
	return c.Series[i].Ns[j] / c.Series[c.Null].Ns[j]
}

// Slug names the curve in file names: "npm-WholeHook-deps".
func (c *Curve) Slug() string {
	name := c.Group.PM()
	if name == "" {
		name = c.Group.Module()
	}
	return strings.NewReplacer("/", "-", " ", "-").Replace(name + "-" + c.Group.Bench + "-" + c.Key)
}

// Curves finds the growth curves in groups: every benchmark whose variants
// carry a size segment at two sizes or more.
func Curves(groups []*Group) []*Curve {
	var out []*Curve
	for _, g := range groups {
		byKey := map[string]*Curve{}
		var keys []string
		index := map[string]map[string]int{} // key → series name → index
		type point struct {
			series string
			size   int
			ns     float64
			peak   float64
			load   float64
			role   Role
		}
		points := map[string][]point{}
		for _, v := range g.Variants {
			segs := strings.Split(v.Name, "/")
			for i, s := range segs {
				m := sizeSegment.FindStringSubmatch(s)
				if m == nil {
					continue
				}
				size, err := strconv.Atoi(m[2])
				if err != nil {
					break
				}
				rest := strings.Join(slices.Delete(slices.Clone(segs), i, i+1), "/")
				if rest == "" {
					rest = g.Bench
				}
				key := m[1]
				if byKey[key] == nil {
					byKey[key] = &Curve{Group: g, Key: key, Null: -1, Tool: -1}
					index[key] = map[string]int{}
					keys = append(keys, key)
				}
				points[key] = append(points[key], point{rest, size, v.Ns, v.PeakKiB, v.Result.Values["load1"], v.Role})
				break
			}
		}
		for _, key := range keys {
			c := byKey[key]
			for _, p := range points[key] {
				if !slices.Contains(c.Sizes, p.size) {
					c.Sizes = append(c.Sizes, p.size)
				}
			}
			if len(c.Sizes) < 2 {
				continue
			}
			slices.Sort(c.Sizes)
			c.Load = make([]float64, len(c.Sizes))
			for _, p := range points[key] {
				i, ok := index[key][p.series]
				if !ok {
					i = len(c.Series)
					index[key][p.series] = i
					c.Series = append(c.Series, Series{Name: p.series, Role: p.role, Ns: make([]float64, len(c.Sizes)), PeakKiB: make([]float64, len(c.Sizes))})
					if p.role == RoleNull && c.Null < 0 {
						c.Null = i
					}
					if p.role == RoleTool && c.Tool < 0 {
						c.Tool = i
					}
				}
				j := slices.Index(c.Sizes, p.size)
				c.Series[i].Ns[j] = p.ns
				c.Series[i].PeakKiB[j] = p.peak
				if p.load > 0 {
					c.Load[j] = p.load
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// comparesToTool reports whether series i gets a column comparing it with
// the tool: the PM's own series do.
func (c *Curve) comparesToTool(i int) bool {
	r := c.Series[i].Role
	return c.Tool >= 0 && (r == RolePM || r == RoleInProcess)
}

// hasLoad reports whether any size has a load figure.
func (c *Curve) hasLoad() bool {
	return slices.ContainsFunc(c.Load, func(v float64) bool { return v > 0 })
}

// WriteTable renders the curve as a Markdown table: a row per size, for
// each series its time, beside the null PM its ratio to it, beside the
// ecosystem tool how many times faster or slower than the tool it is, its
// peak resident memory where measured; and the load average each size was
// measured at.
func (c *Curve) WriteTable(w io.Writer) error {
	var b strings.Builder
	toolName := ""
	if c.Tool >= 0 {
		toolName = c.Series[c.Tool].Name
	}
	b.WriteString("| " + c.Key + " |")
	cols := 0
	for i, s := range c.Series {
		b.WriteString(" `" + s.Name + "` |")
		cols++
		if c.Null >= 0 && i != c.Null {
			b.WriteString(" `" + s.Name + "` × null PM |")
			cols++
		}
		if c.comparesToTool(i) {
			b.WriteString(" `" + s.Name + "` vs `" + toolName + "` |")
			cols++
		}
		if s.hasPeak() {
			b.WriteString(" `" + s.Name + "` peak RSS |")
			cols++
		}
	}
	if c.hasLoad() {
		b.WriteString(" load |")
		cols++
	}
	b.WriteString("\n|---:|" + strings.Repeat("---:|", cols) + "\n")
	for j, size := range c.Sizes {
		fmt.Fprintf(&b, "| %s |", thousands(size))
		for i, s := range c.Series {
			if s.Ns[j] == 0 {
				b.WriteString(" — |")
			} else {
				b.WriteString(" " + dur(s.Ns[j]) + " |")
			}
			if c.Null >= 0 && i != c.Null {
				if r := c.Ratio(i, j); r > 0 {
					fmt.Fprintf(&b, " %.2f× |", r)
				} else {
					b.WriteString(" — |")
				}
			}
			if c.comparesToTool(i) {
				b.WriteString(" " + faster(c.VsTool(i, j)) + " |")
			}
			if s.hasPeak() {
				b.WriteString(" " + kib(s.PeakKiB[j]) + " |")
			}
		}
		if c.hasLoad() {
			if c.Load[j] > 0 {
				fmt.Fprintf(&b, " %.2f |", c.Load[j])
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteGlance renders the curve's rows of the report's summary: per PM
// series, its ratio to the null PM at each size, how it compares with the
// ecosystem tool at each size, its peak memory at the largest size, and
// the load the sizes were measured at.
func (c *Curve) WriteGlance(w io.Writer) error {
	var b strings.Builder
	pm := c.Group.PM()
	if pm == "" {
		pm = c.Group.Module()
	}
	load := "—"
	if c.hasLoad() {
		lo, hi := math.Inf(1), 0.0
		for _, l := range c.Load {
			if l > 0 {
				lo, hi = math.Min(lo, l), math.Max(hi, l)
			}
		}
		load = fmt.Sprintf("%.1f", lo)
		if hi-lo >= 0.05 {
			load += fmt.Sprintf("–%.1f", hi)
		}
	}
	for i, s := range c.Series {
		if s.Role != RolePM && s.Role != RoleInProcess {
			continue
		}
		var null, tool []string
		for j, size := range c.Sizes {
			at := " at " + thousands(size)
			if r := c.Ratio(i, j); r > 0 {
				null = append(null, times(r)+at)
			}
			if r := c.VsTool(i, j); r > 0 && c.comparesToTool(i) {
				tool = append(tool, faster(r)+at)
			}
		}
		peak := "—"
		for j := len(c.Sizes) - 1; j >= 0; j-- {
			if s.PeakKiB[j] > 0 {
				peak = kib(s.PeakKiB[j]) + " at " + thousands(c.Sizes[j])
				break
			}
		}
		toolCell := "—"
		if len(tool) > 0 {
			toolCell = "`" + c.Series[c.Tool].Name + "`: " + strings.Join(tool, ", ")
		}
		nullCell := "—"
		if len(null) > 0 {
			nullCell = strings.Join(null, ", ")
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s | %s | %s | %s |\n", pm, c.Group.Bench, s.Name, c.Key, nullCell, toolCell, peak, load)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// The plot's geometry, in SVG user units.
const (
	plotW, plotH             = 640, 360
	marginL, marginR         = 64, 170
	marginT, marginB         = 36, 48
	innerW, innerH           = plotW - marginL - marginR, plotH - marginT - marginB
	legendX                  = plotW - marginR + 16
	tickLen                  = 4
	plotFont                 = `font-family="sans-serif" font-size="11"`
	plotTitleFont            = `font-family="sans-serif" font-size="13"`
	ratioFloor, ratioCeiling = 0.5, 1e6
)

// palette colours the series, in order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// WriteSVG draws the curve: the size on a logarithmic x axis, each series'
// time divided by the null PM's on a logarithmic y axis (the null PM is
// the line at 1×), or the times themselves when the curve has no null PM.
func (c *Curve) WriteSVG(w io.Writer) error {
	value := func(i, j int) float64 {
		if c.Null >= 0 {
			return c.Ratio(i, j)
		}
		return c.Series[i].Ns[j] / 1e6
	}
	unit := "× null PM"
	if c.Null < 0 {
		unit = "ms per operation"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range c.Series {
		for j := range c.Sizes {
			if v := value(i, j); v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	lo = math.Max(math.Min(lo, 1), ratioFloor)
	hi = math.Min(math.Max(hi, lo*2), ratioCeiling)
	yLo, yHi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if yHi <= yLo {
		yHi = yLo + 1
	}
	xLo, xHi := math.Log10(float64(c.Sizes[0])), math.Log10(float64(c.Sizes[len(c.Sizes)-1]))
	if xHi <= xLo {
		xHi = xLo + 1
	}
	x := func(size int) float64 {
		return marginL + (math.Log10(float64(size))-xLo)/(xHi-xLo)*innerW
	}
	y := func(v float64) float64 {
		v = math.Min(math.Max(v, math.Pow(10, yLo)), math.Pow(10, yHi))
		return marginT + innerH - (math.Log10(v)-yLo)/(yHi-yLo)*innerH
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	title := fmt.Sprintf("%s %s: time by %s", c.Group.PM(), c.Group.Bench, c.Key)
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", plotW, plotH, plotW, plotH)
	p(`<title>%s</title>`+"\n", html.EscapeString(title))
	p(`<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	p(`<text x="%d" y="20" %s>%s</text>`+"\n", marginL, plotTitleFont, html.EscapeString(title))
	// Axes, grid and ticks.
	p(`<g stroke="#ccc" stroke-width="1">` + "\n")
	for e := yLo; e <= yHi; e++ {
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", marginL, y(math.Pow(10, e)), marginL+innerW, y(math.Pow(10, e)))
	}
	for _, s := range c.Sizes {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", x(s), marginT, x(s), marginT+innerH)
	}
	p("</g>\n")
	p(`<g stroke="black" stroke-width="1" fill="none">` + "\n")
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", marginL, marginT+innerH, marginL+innerW, marginT+innerH)
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", marginL, marginT, marginL, marginT+innerH)
	p("</g>\n")
	p(`<g %s fill="black">`+"\n", plotFont)
	for e := yLo; e <= yHi; e++ {
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginL-tickLen-2, y(math.Pow(10, e))+4, html.EscapeString(num(math.Pow(10, e))))
	}
	for _, s := range c.Sizes {
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(s), marginT+innerH+16, html.EscapeString(thousands(s)))
	}
	p(`<text x="%d" y="%d" text-anchor="middle">%s (log scale)</text>`+"\n", marginL+innerW/2, plotH-10, html.EscapeString(c.Key))
	p(`<text x="14" y="%d" text-anchor="middle" transform="rotate(-90 14 %d)">%s (log scale)</text>`+"\n", marginT+innerH/2, marginT+innerH/2, html.EscapeString(unit))
	p("</g>\n")
	// One polyline and its markers per series, and its legend entry.
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		dash := ""
		if s.Role == RoleNull || s.Role == RoleBare {
			dash = ` stroke-dasharray="4 3"`
		}
		var pts []string
		for j, size := range c.Sizes {
			if v := value(i, j); v > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(size), y(v)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", colour, dash, strings.Join(pts, " "))
		for _, pt := range pts {
			xy := strings.Split(pt, ",")
			p(`<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], colour)
		}
		ly := marginT + 8 + 18*i
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", legendX, ly, legendX+18, ly, colour, dash)
		p(`<text x="%d" y="%d" %s>%s</text>`+"\n", legendX+24, ly+4, plotFont, html.EscapeString(s.Name))
	}
	p("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
