package ui

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// A curve as /history and the page's downloads give it: points [step, Unix time, value].
type runCurve struct {
	Loss     [][3]float64 `json:"loss"`
	Accuracy [][3]float64 `json:"accuracy"`
}

func history(t *testing.T, url string) runCurve {
	response, err := http.Get(url + "history")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var c runCurve
	if err := json.NewDecoder(response.Body).Decode(&c); err != nil {
		t.Fatalf("%shistory: %v", url, err)
	}
	return c
}

// A drawn frame of the chart: its lines and its labels, as the page drew them.
type frame struct {
	Lines []struct {
		Color string
		Alpha float64
		Path  [][2]float64
	}
	Labels []label
}

// label is one the page drew on the chart: its text where it drew it, and its text's box.
type label struct {
	Text                     string
	X, Y                     float64
	Left, Right, Top, Bottom float64 // the text's box, in CSS pixels
}

// recordChart makes the chart's canvas keep what it draws from its last clearing (a whole
// frame: the page draws one at once) in window.drawn.
func recordChart(ctx context.Context, t *testing.T) {
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const g = document.getElementById("chart").getContext("2d");
		if (g.recorded) return;
		g.recorded = true;
		const wrap = (name, record) => {
			const draw = g[name].bind(g);
			g[name] = (...args) => { record(...args); return draw(...args); };
		};
		let path = [];
		wrap("clearRect", () => { window.drawn = { Lines: [], Labels: [] }; });
		wrap("moveTo", (x, y) => { path = [[x, y]]; });
		wrap("lineTo", (x, y) => { path.push([x, y]); });
		wrap("stroke", () => drawn.Lines.push({ Color: g.strokeStyle, Alpha: g.globalAlpha, Path: path }));
		wrap("fillText", (text, x, y) => {
			const m = g.measureText(text);
			drawn.Labels.push({ Text: text, X: x, Y: y, Left: x - m.actualBoundingBoxLeft,
				Right: x + m.actualBoundingBoxRight, Top: y - m.actualBoundingBoxAscent,
				Bottom: y + m.actualBoundingBoxDescent });
		});
	})()`, nil)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "a frame of the chart drawn", `window.drawn !== undefined`, 10*time.Second)
}

func drawnFrame(ctx context.Context, t *testing.T) frame {
	var f frame
	if err := chromedp.Run(ctx, chromedp.Evaluate(`drawn`, &f)); err != nil {
		t.Fatal(err)
	}
	return f
}

// lossLine is this run's loss line drawn with this opacity (1: smoothed, 0.25: as recorded).
func (f frame) lossLine(alpha float64) ([][2]float64, bool) {
	for _, line := range f.Lines {
		if line.Color == "#2563eb" && line.Alpha == alpha {
			return line.Path, true
		}
	}
	return nil, false
}

// variation is how far a line goes up and down: the sum of its vertical moves.
func variation(path [][2]float64) float64 {
	total := 0.0
	for i := 1; i < len(path); i++ {
		total += math.Abs(path[i][1] - path[i-1][1])
	}
	return total
}

// press focuses the control and presses a key on it, as a person with a keyboard does.
func press(ctx context.Context, t *testing.T, id, key string) {
	if err := chromedp.Run(ctx, chromedp.Focus("#"+id, chromedp.ByQuery), chromedp.KeyEvent(key)); err != nil {
		t.Fatal(err)
	}
}

// smoothingRedrawsTheLine: the slider's value smooths the solid loss line, more as it rises;
// at 0 the solid line is the recorded points.
func smoothingRedrawsTheLine(ctx context.Context, t *testing.T) {
	recordChart(ctx, t)
	waitUntil(ctx, t, "the smoothing at 0.60", `document.getElementById("smoothingValue").textContent === "0.60"`, time.Second)
	first := drawnFrame(ctx, t)
	recorded, ok := first.lossLine(0.25)
	smoothed, smoothedOk := first.lossLine(1)
	if !ok || !smoothedOk || len(recorded) < 100 {
		t.Fatalf("the chart at smoothing 0.6 has no recorded and smoothed loss lines of this run")
	}
	if variation(smoothed) >= variation(recorded) {
		t.Errorf("the loss line smoothed at 0.6 goes up and down %.0f px, as much as the recorded one's %.0f",
			variation(smoothed), variation(recorded))
	}

	press(ctx, t, "smoothing", kb.End)
	waitUntil(ctx, t, "the smoothing at 0.99", `document.getElementById("smoothingValue").textContent === "0.99"`, 5*time.Second)
	smoother, _ := drawnFrame(ctx, t).lossLine(1)
	if variation(smoother) >= variation(smoothed) {
		t.Errorf("the loss line smoothed at 0.99 goes up and down %.0f px, not less than at 0.6 (%.0f)",
			variation(smoother), variation(smoothed))
	}

	press(ctx, t, "smoothing", kb.Home)
	waitUntil(ctx, t, "the smoothing at 0.00", `document.getElementById("smoothingValue").textContent === "0.00"`, 5*time.Second)
	f := drawnFrame(ctx, t)
	unsmoothed, _ := f.lossLine(1)
	if !reflect.DeepEqual(unsmoothed, recorded) {
		t.Errorf("at smoothing 0 the loss line (%d points) is not the recorded one (%d points)", len(unsmoothed), len(recorded))
	}
	if _, faint := f.lossLine(0.25); faint {
		t.Errorf("at smoothing 0 the recorded loss is drawn twice")
	}
	t.Logf("the loss line goes up and down %.0f px as recorded, %.0f smoothed at 0.6, %.0f at 0.99",
		variation(recorded), variation(smoothed), variation(smoother))
}

// download clicks the button and reads the file the browser saved.
func download(ctx context.Context, t *testing.T, button, name string) []byte {
	dir := t.TempDir()
	if err := chromedp.Run(ctx,
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dir),
		chromedp.Click("#"+button, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name) // the browser writes elsewhere, then renames it when done
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, err := os.ReadFile(path); err == nil {
			return data
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("the %s button saved no %s within 10 s (the download directory holds %v)", button, name, entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// downloadsHoldTheWholeCurve: the CSV and JSON buttons save every point of the run's curve,
// /history's.
func downloadsHoldTheWholeCurve(ctx context.Context, t *testing.T, url string) {
	want := history(t, url)

	var fromJSON runCurve
	if err := json.Unmarshal(download(ctx, t, "json", "pstrain-curve.json"), &fromJSON); err != nil {
		t.Errorf("the JSON download: %v", err)
	} else if !reflect.DeepEqual(fromJSON, want) {
		t.Errorf("the JSON download holds %d loss and %d accuracy points; /history %d and %d, or they differ",
			len(fromJSON.Loss), len(fromJSON.Accuracy), len(want.Loss), len(want.Accuracy))
	}

	rows, err := csv.NewReader(strings.NewReader(string(download(ctx, t, "csv", "pstrain-curve.csv")))).ReadAll()
	if err != nil || len(rows) == 0 || strings.Join(rows[0], ",") != "series,step,time,value" {
		t.Fatalf("the CSV download is not a table of series,step,time,value: %v", err)
	}
	var fromCSV runCurve
	for _, row := range rows[1:] {
		var p [3]float64
		for i := range p {
			if p[i], err = strconv.ParseFloat(row[i+1], 64); err != nil {
				t.Fatalf("CSV row %q: %v", row, err)
			}
		}
		switch row[0] {
		case "loss":
			fromCSV.Loss = append(fromCSV.Loss, p)
		case "accuracy":
			fromCSV.Accuracy = append(fromCSV.Accuracy, p)
		default:
			t.Fatalf("CSV row %q: no series %q", row, row[0])
		}
	}
	if !reflect.DeepEqual(fromCSV, want) {
		t.Errorf("the CSV download holds %d loss and %d accuracy points; /history %d and %d, or they differ",
			len(fromCSV.Loss), len(fromCSV.Accuracy), len(want.Loss), len(want.Accuracy))
	}
	if t.Failed() {
		return
	}
	t.Logf("both downloads hold /history's %d loss points (steps %.0f to %.0f) and %d accuracy points",
		len(want.Loss), want.Loss[0][0], want.Loss[len(want.Loss)-1][0], len(want.Accuracy))
}

// xAxisLabels are the chart's tick labels along its foot, left to right: the lowest row but
// the axis's name.
func xAxisLabels(ctx context.Context, t *testing.T) []label {
	f := drawnFrame(ctx, t)
	var name string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("chart").dataset.xAxisName`, &name)); err != nil {
		t.Fatal(err)
	}
	lowest := 0.0
	for _, l := range f.Labels {
		if l.Text != name {
			lowest = max(lowest, l.Y)
		}
	}
	var labels []label
	for _, l := range f.Labels {
		if l.Y == lowest && l.Text != name {
			labels = append(labels, l)
		}
	}
	return labels
}

// checkLinearAxis checks that an axis's labels stand where their values are: at least three,
// their values evenly spaced and each at the position that the line through the others puts it
// at (within half a pixel); it says whether they do. "0 s, 1 s, 3 s" at even spaces fails.
func checkLinearAxis(t *testing.T, axis string, texts []string, values, positions []float64) bool {
	if len(values) < 3 {
		t.Errorf("the %s is labelled %q; want at least three labels", axis, texts)
		return false
	}
	by := values[1] - values[0]
	scale := (positions[len(positions)-1] - positions[0]) / (values[len(values)-1] - values[0])
	for i := range values {
		if math.Abs(values[i]-values[0]-float64(i)*by) > 1e-9*math.Abs(by) ||
			math.Abs(positions[i]-positions[0]-(values[i]-values[0])*scale) > 0.5 {
			t.Errorf("the %s is labelled %q at %v: label %q is not where its value is", axis, texts, positions, texts[i])
			return false
		}
	}
	return true
}

// checkXAxis checks the x axis's labels against the whole-unit values they read (`value` of each
// text): from 0 by even steps of whole units, each where the axis puts its value (within half a
// pixel), the last within a step of the axis's end, `end`.
func checkXAxis(ctx context.Context, t *testing.T, labels []label, value func(string) float64, end float64) {
	var texts []string
	var values, positions []float64
	for _, l := range labels {
		texts = append(texts, l.Text)
		values = append(values, value(l.Text))
		positions = append(positions, l.X)
	}
	if !checkLinearAxis(t, "x axis", texts, values, positions) {
		return
	}
	var axis struct{ Left, PerUnit float64 } // the plot's left, and pixels a unit along the axis
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const chart = document.getElementById("chart");
		return { Left: chartBox.left, PerUnit: (chart.clientWidth - chartBox.left - chartBox.right) / +chart.dataset.xMax };
	})()`, &axis)); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if at := axis.Left + v*axis.PerUnit; math.Abs(positions[i]-at) > 0.5 {
			t.Errorf("the x axis is labelled %q: %q is at %.1f px, where the axis has %.2f", texts, texts[i], positions[i],
				(positions[i]-axis.Left)/axis.PerUnit)
		}
	}
	if by := values[1] - values[0]; values[0] != 0 || by != math.Round(by) || values[len(values)-1] <= end-by {
		t.Errorf("the x axis is labelled %q: not from 0 by whole units up to within a step of %.1f", texts, end)
	}
}

// accuracyAxisLabelled: the accuracy axis, on the right, is labelled at ticks through its range,
// not only at its ends, each label where its value is.
func accuracyAxisLabelled(ctx context.Context, t *testing.T) {
	recordChart(ctx, t)
	f := drawnFrame(ctx, t)
	title := -1.0
	for _, l := range f.Labels {
		if l.Text == "test accuracy" {
			title = l.X
		}
	}
	var texts []string
	var values, positions []float64
	for _, l := range f.Labels {
		if l.X == title && l.Text != "test accuracy" {
			v, err := strconv.ParseFloat(l.Text, 64)
			if err != nil {
				t.Fatalf("the accuracy axis has a label %q", l.Text)
			}
			texts = append(texts, l.Text)
			values = append(values, v)
			positions = append(positions, l.Y)
		}
	}
	checkLinearAxis(t, "accuracy axis", texts, values, positions)
	t.Logf("the accuracy axis is labelled %q", texts)
}

// span is how long a run's curve lasts, from its first point to its last.
func (c runCurve) span() float64 {
	first, last := math.Inf(1), math.Inf(-1)
	for _, series := range [][][3]float64{c.Loss, c.Accuracy} {
		for _, p := range series {
			first, last = min(first, p[1]), max(last, p[1])
		}
	}
	return last - first
}

// timeAxisSwitch: the x axis switched to time labels its foot with whole durations up to the
// longest run's, each where it is on the axis, and back to step with global steps up to the
// run's last.
func timeAxisSwitch(ctx context.Context, t *testing.T, trainSteps int, urls ...string) {
	recordChart(ctx, t)
	step := func(text string) float64 {
		v, err := strconv.Atoi(text)
		if err != nil {
			t.Fatalf("the x axis by step has a label %q", text)
		}
		return float64(v)
	}
	checkXAxis(ctx, t, xAxisLabels(ctx, t), step, float64(trainSteps))
	longest := 0.0
	for _, url := range urls {
		longest = max(longest, history(t, url).span())
	}

	press(ctx, t, "xAxis", kb.ArrowDown)
	waitUntil(ctx, t, "the x axis by time", `document.getElementById("xAxis").value === "time"`, 5*time.Second)
	labels := xAxisLabels(ctx, t)
	checkXAxis(ctx, t, labels, func(text string) float64 { return seconds(t, text) }, longest)
	var texts []string
	for _, l := range labels {
		texts = append(texts, l.Text)
	}
	t.Logf("the x axis by time is labelled %q (the longest run lasted %.1f s)", texts, longest)

	press(ctx, t, "xAxis", kb.ArrowUp)
	waitUntil(ctx, t, "the x axis by step", `document.getElementById("xAxis").value === "step"`, 5*time.Second)
	checkXAxis(ctx, t, xAxisLabels(ctx, t), step, float64(trainSteps))
}

// durationsRoundOnce: the page's duration() at the boundaries where rounding each part on its own
// wrote "60 s", "1 min 60 s", "59 min 60 s" and "1 h 60 min", as the C++ durationText writes them
// (metrics_test).
func durationsRoundOnce(ctx context.Context, t *testing.T) {
	cases := []struct {
		seconds float64
		text    string
	}{{0.4, "0 s"}, {59.4, "59 s"}, {59.6, "1 min 0 s"}, {119.6, "2 min 0 s"}, {3599.4, "59 min 59 s"},
		{3599.6, "1 h 0 min"}, {5400, "1 h 30 min"}, {7170, "2 h 0 min"}, {7199.6, "2 h 0 min"}}
	for _, c := range cases {
		var text string
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf("duration(%v)", c.seconds), &text)); err != nil {
			t.Fatal(err)
		}
		if text != c.text {
			t.Errorf("the page writes %v s as %q; want %q", c.seconds, text, c.text)
		}
	}
}
